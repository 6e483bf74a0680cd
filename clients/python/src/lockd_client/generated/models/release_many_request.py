from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="ReleaseManyRequest")



@_attrs_define
class ReleaseManyRequest:
    """ Release several locks you hold.

        Attributes:
            owner (str): The owner that holds the locks: trimmed of surrounding whitespace, then 1 to 255 characters, no
                control characters. Compared case-sensitively. Example: worker-7.
            resources (list[str]): 1 to 64 resource names, each named once.
     """

    owner: str
    resources: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        owner = self.owner

        resources = self.resources




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "owner": owner,
            "resources": resources,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        owner = d.pop("owner")

        resources = cast(list[str], d.pop("resources"))


        release_many_request = cls(
            owner=owner,
            resources=resources,
        )


        release_many_request.additional_properties = d
        return release_many_request

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
