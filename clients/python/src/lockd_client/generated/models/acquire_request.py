from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.acquire_request_mode import AcquireRequestMode
from ..types import UNSET, Unset






T = TypeVar("T", bound="AcquireRequest")



@_attrs_define
class AcquireRequest:
    """ Acquire a lock. Unknown fields are ignored.

        Attributes:
            lock_delay_seconds (int | Unset): Exclusive only (a shared acquire may send 0): once the lease ends by expiry
                rather than a release, other owners cannot take the lock until `expires_at` plus this delay (an acquire then
                answers `acquired: false` with `Retry-After`, a status 404 with `available_at`), in whole seconds, 0 to 60.
                Absent: the server's default (`--default-lock-delay-seconds`, 0 unless configured). A release ends the lease
                with no delay. Example: 10.
            mode (AcquireRequestMode | Unset): `exclusive` (the default): one holder excludes every other. `shared`: shared
                holders coexist, each with its own lease and fencing token, and an exclusive holder excludes them all. While an
                exclusive acquire waits on a server, later shared acquires on that server queue behind it. An owner holding the
                lock in the other mode gets 409 `/problems/mode-mismatch` (no upgrade or downgrade in place). Default:
                AcquireRequestMode.EXCLUSIVE. Example: shared.
            owner (str | Unset): Who is acquiring: trimmed of surrounding whitespace, then 1 to 255 characters, no control
                characters. Compared case-sensitively. An owner string is an identity: an acquire by the owner that holds the
                lock re-grants it to that holder (same fencing token), so two holders must never share one (add a random part
                per process or run). Example: worker-7.
            session (str | Unset): Hold under a session: the id of a live session of the tenant (22 characters of URL-safe
                base64, as `POST /sessions` answered it). The session is the holder: its owner label shows as the hold's owner,
                its end is the hold's end (moved by each keepalive), and its lock-delay applies when it runs out. Not together
                with the holder's name, `ttl_seconds` or `lock_delay_seconds` (422 `conflict`); an unknown or ended session is
                404 /problems/session-not-found, and nothing is granted. Example: q7Hc0mB1TzK4n9XwVd2aLg.
            ttl_seconds (int | Unset): The lease length in whole seconds, 1 to the server's maximum (`--max-ttl-seconds`,
                86400 on this server). Example: 30.
            value (Any | Unset): A value stored with the lease and shown with the lock (a re-grant to the holder keeps the
                one it had unless given a new one). Any JSON value whose compact text is at most 4096 bytes (larger: 422
                `too_long`); `null` is the same as absent. Example: {'host': '10.0.0.7', 'port': 8443}.
            wait_seconds (int | Unset): How long to wait for the lock when another owner holds it, in whole seconds, 0 to
                the server's maximum (`--max-wait-seconds`, 60 on this server). Absent or 0: answer at once (`null` is refused,
                like any value that is not a number). Waiting requests of one lock are served first come first served on each
                server; the answer comes as soon as the lock is granted, or with `acquired: false` and `Retry-After` when the
                wait ends. A client that closes its connection leaves the queue at once. Example: 10.
     """

    lock_delay_seconds: int | Unset = UNSET
    mode: AcquireRequestMode | Unset = AcquireRequestMode.EXCLUSIVE
    owner: str | Unset = UNSET
    session: str | Unset = UNSET
    ttl_seconds: int | Unset = UNSET
    value: Any | Unset = UNSET
    wait_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        lock_delay_seconds = self.lock_delay_seconds

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value


        owner = self.owner

        session = self.session

        ttl_seconds = self.ttl_seconds

        value = self.value

        wait_seconds = self.wait_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if lock_delay_seconds is not UNSET:
            field_dict["lock_delay_seconds"] = lock_delay_seconds
        if mode is not UNSET:
            field_dict["mode"] = mode
        if owner is not UNSET:
            field_dict["owner"] = owner
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
        lock_delay_seconds = d.pop("lock_delay_seconds", UNSET)

        _mode = d.pop("mode", UNSET)
        mode: AcquireRequestMode | Unset
        if isinstance(_mode,  Unset):
            mode = UNSET
        else:
            mode = AcquireRequestMode(_mode)




        owner = d.pop("owner", UNSET)

        session = d.pop("session", UNSET)

        ttl_seconds = d.pop("ttl_seconds", UNSET)

        value = d.pop("value", UNSET)

        wait_seconds = d.pop("wait_seconds", UNSET)

        acquire_request = cls(
            lock_delay_seconds=lock_delay_seconds,
            mode=mode,
            owner=owner,
            session=session,
            ttl_seconds=ttl_seconds,
            value=value,
            wait_seconds=wait_seconds,
        )


        acquire_request.additional_properties = d
        return acquire_request

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
