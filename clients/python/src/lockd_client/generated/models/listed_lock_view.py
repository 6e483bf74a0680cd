from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="ListedLockView")



@_attrs_define
class ListedLockView:
    """ A live lock as listed: the lock and how long its lease still runs.

        Attributes:
            acquired_at (datetime.datetime): When this grant was made (RFC 3339, UTC, milliseconds). Example:
                2026-11-29T21:32:27.123Z.
            expires_at (datetime.datetime): When the lease ends unless renewed (RFC 3339, UTC, milliseconds). Example:
                2026-11-29T21:32:57.123Z.
            fencing_token (int): Strictly increases with every new grant of the resource; kept by renewals and same-owner
                re-acquires. Pass it to downstream systems so they can reject a stale holder. Example: 17.
            mode (Mode): How a lock is held: `exclusive` (one holder excludes every other) or `shared` (shared holders
                coexist, each with its own lease and fencing token).
            owner (str): The holder, as it named itself (trimmed). Example: worker-7.
            resource (str): The locked resource name. Example: payment:42.
            ttl_remaining_ms (int): Milliseconds until `expires_at`, measured by the server when it read the page (on
                PostgreSQL by the database clock). Use it rather than comparing `expires_at` with your
                own clock. Example: 29873.
            waiting (int): Acquires waiting for this lock on this server. Example: 0.
            session (str | Unset): The session the lease is held under, when it is: its holder is then the session (whose
                owner label the owner shows) and it ends with the session. Absent otherwise. Example: q7Hc0mB1TzK4n9XwVd2aLg.
            value (Any | Unset): The value stored with this holder's lease; absent when never set.
     """

    acquired_at: datetime.datetime
    expires_at: datetime.datetime
    fencing_token: int
    mode: Mode
    owner: str
    resource: str
    ttl_remaining_ms: int
    waiting: int
    session: str | Unset = UNSET
    value: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        acquired_at = self.acquired_at.isoformat()

        expires_at = self.expires_at.isoformat()

        fencing_token = self.fencing_token

        mode = self.mode.value

        owner = self.owner

        resource = self.resource

        ttl_remaining_ms = self.ttl_remaining_ms

        waiting = self.waiting

        session = self.session

        value = self.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acquired_at": acquired_at,
            "expires_at": expires_at,
            "fencing_token": fencing_token,
            "mode": mode,
            "owner": owner,
            "resource": resource,
            "ttl_remaining_ms": ttl_remaining_ms,
            "waiting": waiting,
        })
        if session is not UNSET:
            field_dict["session"] = session
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        acquired_at = datetime.datetime.fromisoformat(d.pop("acquired_at"))




        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))




        fencing_token = d.pop("fencing_token")

        mode = Mode(d.pop("mode"))




        owner = d.pop("owner")

        resource = d.pop("resource")

        ttl_remaining_ms = d.pop("ttl_remaining_ms")

        waiting = d.pop("waiting")

        session = d.pop("session", UNSET)

        value = d.pop("value", UNSET)

        listed_lock_view = cls(
            acquired_at=acquired_at,
            expires_at=expires_at,
            fencing_token=fencing_token,
            mode=mode,
            owner=owner,
            resource=resource,
            ttl_remaining_ms=ttl_remaining_ms,
            waiting=waiting,
            session=session,
            value=value,
        )


        listed_lock_view.additional_properties = d
        return listed_lock_view

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
