from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="PermitUnavailable")



@_attrs_define
class PermitUnavailable:
    """ Too few permits are free (or, on this server, earlier waiters come first): retry later. Not
    an error.

        Attributes:
            acquired (bool): Always `false` here. Example: False.
            available (int): The permits free when the answer was made. Example: 1.
            limit (int): The semaphore's limit. Example: 8.
            name (str): The semaphore's name. Example: export.
     """

    acquired: bool
    available: int
    limit: int
    name: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        acquired = self.acquired

        available = self.available

        limit = self.limit

        name = self.name


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acquired": acquired,
            "available": available,
            "limit": limit,
            "name": name,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        acquired = d.pop("acquired")

        available = d.pop("available")

        limit = d.pop("limit")

        name = d.pop("name")

        permit_unavailable = cls(
            acquired=acquired,
            available=available,
            limit=limit,
            name=name,
        )


        permit_unavailable.additional_properties = d
        return permit_unavailable

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
