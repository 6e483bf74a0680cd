from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="FieldError")



@_attrs_define
class FieldError:
    """ One invalid input of a 422 answer.

        Attributes:
            code (str): A stable machine-readable code: `required`, `invalid_type`, `invalid_utf8`, `empty`,
                `too_long`, `control_character`, `out_of_range`, `invalid_value` or `conflict`. Example: out_of_range.
            field (str): The input: `resource` (the path segment), `owner`, `ttl_seconds`. Example: ttl_seconds.
            message (str): What is wrong, for people. Example: must be between 1 and 86400, got 0.
     """

    code: str
    field: str
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        code = self.code

        field = self.field

        message = self.message


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "code": code,
            "field": field,
            "message": message,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        field = d.pop("field")

        message = d.pop("message")

        field_error = cls(
            code=code,
            field=field,
            message=message,
        )


        field_error.additional_properties = d
        return field_error

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
