from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="RenewRequest")



@_attrs_define
class RenewRequest:
    """ Renew a lock you hold. Unknown fields are ignored.

        Attributes:
            owner (str): The owner that holds the lock: trimmed of surrounding whitespace, then 1 to 255 characters, no
                control characters. Compared case-sensitively. Example: worker-7.
            ttl_seconds (int): The new lease length from now, in whole seconds, 1 to the server's maximum (`--max-ttl-
                seconds`, 86400 on this server). Example: 30.
            session (str | Unset): A lease held under a session ends with the session: a renew naming one is answered 409
                /problems/session-held (keep the session alive instead). Example: q7Hc0mB1TzK4n9XwVd2aLg.
            value (Any | Unset): Replaces the stored value; absent keeps it. Any JSON value whose compact text is at most
                4096 bytes (larger: 422 `too_long`); `null` is the same as absent. Example: {'host': '10.0.0.7', 'port': 8443}.
     """

    owner: str
    ttl_seconds: int
    session: str | Unset = UNSET
    value: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        owner = self.owner

        ttl_seconds = self.ttl_seconds

        session = self.session

        value = self.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "owner": owner,
            "ttl_seconds": ttl_seconds,
        })
        if session is not UNSET:
            field_dict["session"] = session
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        owner = d.pop("owner")

        ttl_seconds = d.pop("ttl_seconds")

        session = d.pop("session", UNSET)

        value = d.pop("value", UNSET)

        renew_request = cls(
            owner=owner,
            ttl_seconds=ttl_seconds,
            session=session,
            value=value,
        )


        renew_request.additional_properties = d
        return renew_request

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
