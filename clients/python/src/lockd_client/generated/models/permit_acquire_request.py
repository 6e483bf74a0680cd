from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="PermitAcquireRequest")



@_attrs_define
class PermitAcquireRequest:
    """ Acquire permits of a semaphore. Unknown fields are ignored.

        Attributes:
            limit (int): The semaphore's limit: the live holders' permits add up to at most this, 1 to 10000. Every live
                holder uses the same limit: another one answers 409 `/problems/limit-mismatch` until no holder is live. Example:
                8.
            lock_delay_seconds (int | Unset): Once the grant ends by expiry rather than a release, its permits stay taken
                for other owners until `expires_at` plus this delay (acquires meanwhile count them as taken), in whole seconds,
                0 to 60. Absent: the server's default (`--default-lock-delay-seconds`, 0 unless configured). A release ends the
                lease with no delay. Example: 10.
            owner (str | Unset): Who is acquiring: trimmed of surrounding whitespace, then 1 to 255 characters, no control
                characters. Compared case-sensitively. An owner holds at most one grant per semaphore. Example: worker-7.
            permits (int | Unset): How many permits to take, 1 (the default) to `limit`. An owner holds at most one grant
                per semaphore: acquiring again with the same permits re-grants it (same fencing token), with other permits
                answers 409 `/problems/permits-mismatch`. Example: 1.
            session (str | Unset): Hold under a session: the id of a live session of the tenant (22 characters of URL-safe
                base64, as `POST /sessions` answered it). The session is the holder: its owner label shows as the hold's owner,
                its end is the hold's end (moved by each keepalive), and its lock-delay applies when it runs out. Not together
                with the holder's name, `ttl_seconds` or `lock_delay_seconds` (422 `conflict`); an unknown or ended session is
                404 /problems/session-not-found, and nothing is granted. Example: q7Hc0mB1TzK4n9XwVd2aLg.
            ttl_seconds (int | Unset): The lease length in whole seconds, 1 to the server's maximum (`--max-ttl-seconds`,
                86400 on this server). Example: 30.
            value (Any | Unset): A value stored with the grant and shown with it. Any JSON value whose compact text is at
                most 4096 bytes (larger: 422 `too_long`); `null` is the same as absent. Example: {'host': '10.0.0.7', 'port':
                8443}.
            wait_seconds (int | Unset): How long to wait for permits when too few are free, in whole seconds, 0 to the
                server's maximum (`--max-wait-seconds`, 60 on this server). Absent or 0: answer at once (`null` is refused, like
                any value that is not a number). Waiting requests of one semaphore are served first come first served on each
                server, and a later one never overtakes an earlier one that needs more permits. The answer comes as soon as the
                permits are granted, or with `acquired: false` and `Retry-After` when the wait ends. Example: 10.
     """

    limit: int
    lock_delay_seconds: int | Unset = UNSET
    owner: str | Unset = UNSET
    permits: int | Unset = UNSET
    session: str | Unset = UNSET
    ttl_seconds: int | Unset = UNSET
    value: Any | Unset = UNSET
    wait_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        limit = self.limit

        lock_delay_seconds = self.lock_delay_seconds

        owner = self.owner

        permits = self.permits

        session = self.session

        ttl_seconds = self.ttl_seconds

        value = self.value

        wait_seconds = self.wait_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "limit": limit,
        })
        if lock_delay_seconds is not UNSET:
            field_dict["lock_delay_seconds"] = lock_delay_seconds
        if owner is not UNSET:
            field_dict["owner"] = owner
        if permits is not UNSET:
            field_dict["permits"] = permits
        if session is not UNSET:
            field_dict["session"] = session
        if ttl_seconds is not UNSET:
            field_dict["ttl_seconds"] = ttl_seconds
        if value is not UNSET:
            field_dict["value"] = value
        if wait_seconds is not UNSET:
            field_dict["wait_seconds"] = wait_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        limit = d.pop("limit")

        lock_delay_seconds = d.pop("lock_delay_seconds", UNSET)

        owner = d.pop("owner", UNSET)

        permits = d.pop("permits", UNSET)

        session = d.pop("session", UNSET)

        ttl_seconds = d.pop("ttl_seconds", UNSET)

        value = d.pop("value", UNSET)

        wait_seconds = d.pop("wait_seconds", UNSET)

        permit_acquire_request = cls(
            limit=limit,
            lock_delay_seconds=lock_delay_seconds,
            owner=owner,
            permits=permits,
            session=session,
            ttl_seconds=ttl_seconds,
            value=value,
            wait_seconds=wait_seconds,
        )


        permit_acquire_request.additional_properties = d
        return permit_acquire_request

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
