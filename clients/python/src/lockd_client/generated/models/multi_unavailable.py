from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="MultiUnavailable")



@_attrs_define
class MultiUnavailable:
    """ Some locks could not be granted: none was, and nothing changed.

        Attributes:
            acquired (bool): Always `false` here. Example: False.
            unavailable (list[str]): The locks that could not be granted (held by others, or by the caller in the other
                mode),
                in request order. Example: ['account:2'].
     """

    acquired: bool
    unavailable: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        acquired = self.acquired

        unavailable = self.unavailable




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acquired": acquired,
            "unavailable": unavailable,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        acquired = d.pop("acquired")

        unavailable = cast(list[str], d.pop("unavailable"))


        multi_unavailable = cls(
            acquired=acquired,
            unavailable=unavailable,
        )


        multi_unavailable.additional_properties = d
        return multi_unavailable

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
