from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.multi_acquire_request_locks_item import MultiAcquireRequestLocksItem





T = TypeVar("T", bound="MultiAcquireRequest")



@_attrs_define
class MultiAcquireRequest:
    """ Acquire several locks together, or none. Unknown fields are ignored.

        Attributes:
            locks (list[MultiAcquireRequestLocksItem]): 1 to 64 locks, each resource named once (two entries naming one
                resource are a 422 `duplicate` even in different modes), each in its mode.
            lock_delay_seconds (int | Unset): A set's grants have no lock-delay: only 0 is accepted (acquire a lock alone
                for one). Example: 0.
            owner (str | Unset): Who is acquiring every lock: trimmed of surrounding whitespace, then 1 to 255 characters,
                no control characters. Compared case-sensitively. Example: worker-7.
            session (str | Unset): Hold under a session: the id of a live session of the tenant (22 characters of URL-safe
                base64, as `POST /sessions` answered it). The session is the holder: its owner label shows as the hold's owner,
                its end is the hold's end (moved by each keepalive), and its lock-delay applies when it runs out. Not together
                with the holder's name, `ttl_seconds` or `lock_delay_seconds` (422 `conflict`); an unknown or ended session is
                404 /problems/session-not-found, and nothing is granted. Example: q7Hc0mB1TzK4n9XwVd2aLg.
            ttl_seconds (int | Unset): The lease length of every lock in whole seconds, 1 to the server's maximum (`--max-
                ttl-seconds`, 86400 on this server). Example: 30.
            value (Any | Unset): A value stored with each lease. Any JSON value whose compact text is at most 4096 bytes
                (larger: 422 `too_long`); `null` is the same as absent. Example: {'host': '10.0.0.7', 'port': 8443}.
            wait_seconds (int | Unset): How long to wait until every lock is available together, in whole seconds, 0 to the
                server's maximum (`--max-wait-seconds`, 60 on this server). Absent or 0: answer at once (`null` is refused, like
                any value that is not a number). Nothing is held while waiting. The answer comes as soon as all are granted, or
                with `acquired: false` and `Retry-After` when the wait ends. Example: 10.
     """

    locks: list[MultiAcquireRequestLocksItem]
    lock_delay_seconds: int | Unset = UNSET
    owner: str | Unset = UNSET
    session: str | Unset = UNSET
    ttl_seconds: int | Unset = UNSET
    value: Any | Unset = UNSET
    wait_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.multi_acquire_request_locks_item import MultiAcquireRequestLocksItem # noqa: PLC0415
        locks = []
        for locks_item_data in self.locks:
            locks_item = locks_item_data.to_dict()
            locks.append(locks_item)



        lock_delay_seconds = self.lock_delay_seconds

        owner = self.owner

        session = self.session

        ttl_seconds = self.ttl_seconds

        value = self.value

        wait_seconds = self.wait_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "locks": locks,
        })
        if lock_delay_seconds is not UNSET:
            field_dict["lock_delay_seconds"] = lock_delay_seconds
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
        from ..models.multi_acquire_request_locks_item import MultiAcquireRequestLocksItem # noqa: PLC0415
        d = dict(src_dict)
        locks = []
        _locks = d.pop("locks")
        for locks_item_data in (_locks):
            locks_item = MultiAcquireRequestLocksItem.from_dict(locks_item_data)



            locks.append(locks_item)


        lock_delay_seconds = d.pop("lock_delay_seconds", UNSET)

        owner = d.pop("owner", UNSET)

        session = d.pop("session", UNSET)

        ttl_seconds = d.pop("ttl_seconds", UNSET)

        value = d.pop("value", UNSET)

        wait_seconds = d.pop("wait_seconds", UNSET)

        multi_acquire_request = cls(
            locks=locks,
            lock_delay_seconds=lock_delay_seconds,
            owner=owner,
            session=session,
            ttl_seconds=ttl_seconds,
            value=value,
            wait_seconds=wait_seconds,
        )


        multi_acquire_request.additional_properties = d
        return multi_acquire_request

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
