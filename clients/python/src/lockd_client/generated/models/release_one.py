from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.release_outcome import ReleaseOutcome
from ..types import UNSET, Unset






T = TypeVar("T", bound="ReleaseOne")



@_attrs_define
class ReleaseOne:
    """ What a release did with one lock: `released` (as `204` alone), `forbidden` (`403`: another
    owner holds it), or `not_found` (`404`: no one does).

        Attributes:
            resource (str):  Example: account:1.
            result (ReleaseOutcome): What a release did with one lock.
            fencing_token (int | Unset): The ended lease's token (`released` only). Example: 41.
     """

    resource: str
    result: ReleaseOutcome
    fencing_token: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        resource = self.resource

        result = self.result.value

        fencing_token = self.fencing_token


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "resource": resource,
            "result": result,
        })
        if fencing_token is not UNSET:
            field_dict["fencing_token"] = fencing_token

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        resource = d.pop("resource")

        result = ReleaseOutcome(d.pop("result"))




        fencing_token = d.pop("fencing_token", UNSET)

        release_one = cls(
            resource=resource,
            result=result,
            fencing_token=fencing_token,
        )


        release_one.additional_properties = d
        return release_one

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
