from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="AcquireHeld")



@_attrs_define
class AcquireHeld:
    """ Another owner holds a live lock on the resource: retry later. Not an error.

        Attributes:
            acquired (bool): Always `false` here. Example: False.
            resource (str): The resource that is held. Example: payment:42.
     """

    acquired: bool
    resource: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        acquired = self.acquired

        resource = self.resource


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acquired": acquired,
            "resource": resource,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        acquired = d.pop("acquired")

        resource = d.pop("resource")

        acquire_held = cls(
            acquired=acquired,
            resource=resource,
        )


        acquire_held.additional_properties = d
        return acquire_held

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
