from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="SessionView")



@_attrs_define
class SessionView:
    """ A session: one lease that keeps every hold taken under it alive.

        Attributes:
            created_at (datetime.datetime): When it was opened (RFC 3339, UTC, milliseconds). Example:
                2026-11-29T21:32:27.123Z.
            expires_at (datetime.datetime): When it ends, and every hold with it, unless kept alive (RFC 3339, UTC,
                milliseconds). Example: 2026-11-29T21:32:37.123Z.
            id (str): The session's id: opaque and unguessable (128 random bits, URL-safe base64). Send it as
                `session` to hold under the session, and keep it secret as you would a key. Example: q7Hc0mB1TzK4n9XwVd2aLg.
            lock_delay_seconds (int): Once the session runs out (not when it is closed or forced), each hold's place stays
                kept
                from others for this long. Example: 0.
            owner (str): The label every hold of the session shows as its owner (the id when none was given). Example:
                worker-7.
            ttl_seconds (int): The session's TTL: each keepalive moves its end to now plus this. Example: 10.
     """

    created_at: datetime.datetime
    expires_at: datetime.datetime
    id: str
    lock_delay_seconds: int
    owner: str
    ttl_seconds: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        id = self.id

        lock_delay_seconds = self.lock_delay_seconds

        owner = self.owner

        ttl_seconds = self.ttl_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "created_at": created_at,
            "expires_at": expires_at,
            "id": id,
            "lock_delay_seconds": lock_delay_seconds,
            "owner": owner,
            "ttl_seconds": ttl_seconds,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))




        id = d.pop("id")

        lock_delay_seconds = d.pop("lock_delay_seconds")

        owner = d.pop("owner")

        ttl_seconds = d.pop("ttl_seconds")

        session_view = cls(
            created_at=created_at,
            expires_at=expires_at,
            id=id,
            lock_delay_seconds=lock_delay_seconds,
            owner=owner,
            ttl_seconds=ttl_seconds,
        )


        session_view.additional_properties = d
        return session_view

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
