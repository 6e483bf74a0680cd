from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="SessionOpenRequest")



@_attrs_define
class SessionOpenRequest:
    """ Open a session. Unknown fields are ignored.

        Attributes:
            ttl_seconds (int): How long the session lives without a keepalive in whole seconds, 1 to the server's maximum
                (`--max-ttl-seconds`, 86400 on this server). Example: 30.
            lock_delay_seconds (int | Unset): When the session runs out (not when it is closed or forced), each hold's place
                stays kept from others until the session's end plus this delay, in whole seconds, 0 to 60. Absent: the server's
                default (`--default-lock-delay-seconds`, 0 unless configured). A release ends the lease with no delay. Example:
                10.
            owner (str | Unset): The label every hold of the session shows as its owner (by default the session's id):
                trimmed of surrounding whitespace, then 1 to 255 characters, no control characters. Compared case-sensitively.
                Two sessions with one label are still two holders. Example: worker-7.
     """

    ttl_seconds: int
    lock_delay_seconds: int | Unset = UNSET
    owner: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        ttl_seconds = self.ttl_seconds

        lock_delay_seconds = self.lock_delay_seconds

        owner = self.owner


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "ttl_seconds": ttl_seconds,
        })
        if lock_delay_seconds is not UNSET:
            field_dict["lock_delay_seconds"] = lock_delay_seconds
        if owner is not UNSET:
            field_dict["owner"] = owner

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ttl_seconds = d.pop("ttl_seconds")

        lock_delay_seconds = d.pop("lock_delay_seconds", UNSET)

        owner = d.pop("owner", UNSET)

        session_open_request = cls(
            ttl_seconds=ttl_seconds,
            lock_delay_seconds=lock_delay_seconds,
            owner=owner,
        )


        session_open_request.additional_properties = d
        return session_open_request

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
