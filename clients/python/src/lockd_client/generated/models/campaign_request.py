from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="CampaignRequest")



@_attrs_define
class CampaignRequest:
    """ Campaign to lead an election. Unknown fields are ignored.

        Attributes:
            candidate (str | Unset): Who campaigns. A candidate string is an identity: the leader campaigning again is re-
                granted its lease (same term), so two candidates must never share one: trimmed of surrounding whitespace, then 1
                to 255 characters, no control characters. Compared case-sensitively. Example: worker-7.
            lock_delay_seconds (int | Unset): Once the leader's lease ends by expiry rather than a resign, other candidates
                cannot be elected until `expires_at` plus this delay, in whole seconds, 0 to 60. Absent: the server's default
                (`--default-lock-delay-seconds`, 0 unless configured). A release ends the lease with no delay. Example: 10.
            session (str | Unset): Hold under a session: the id of a live session of the tenant (22 characters of URL-safe
                base64, as `POST /sessions` answered it). The session is the holder: its owner label shows as the hold's owner,
                its end is the hold's end (moved by each keepalive), and its lock-delay applies when it runs out. Not together
                with the holder's name, `ttl_seconds` or `lock_delay_seconds` (422 `conflict`); an unknown or ended session is
                404 /problems/session-not-found, and nothing is granted. Example: q7Hc0mB1TzK4n9XwVd2aLg.
            ttl_seconds (int | Unset): The leader's lease length in whole seconds, 1 to the server's maximum (`--max-ttl-
                seconds`, 86400 on this server). Example: 30.
            value (Any | Unset): What the leader proclaims once elected (the sitting leader campaigning again keeps the one
                it had unless given a new one). Any JSON value whose compact text is at most 4096 bytes (larger: 422
                `too_long`); `null` is the same as absent. Example: {'host': '10.0.0.7', 'port': 8443}.
            wait_seconds (int | Unset): How long to wait for the office when another candidate leads, in whole seconds, 0 to
                the server's maximum (`--max-wait-seconds`, 60 on this server). Absent or 0: answer at once (`null` is refused,
                like any value that is not a number). Waiting candidates of one election are served first come first served on
                each server; the answer comes as soon as the candidate is elected, or with `elected: false` and `Retry-After`
                when the wait ends. A client that closes its connection leaves the line at once. Example: 10.
     """

    candidate: str | Unset = UNSET
    lock_delay_seconds: int | Unset = UNSET
    session: str | Unset = UNSET
    ttl_seconds: int | Unset = UNSET
    value: Any | Unset = UNSET
    wait_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        candidate = self.candidate

        lock_delay_seconds = self.lock_delay_seconds

        session = self.session

        ttl_seconds = self.ttl_seconds

        value = self.value

        wait_seconds = self.wait_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if candidate is not UNSET:
            field_dict["candidate"] = candidate
        if lock_delay_seconds is not UNSET:
            field_dict["lock_delay_seconds"] = lock_delay_seconds
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
        candidate = d.pop("candidate", UNSET)

        lock_delay_seconds = d.pop("lock_delay_seconds", UNSET)

        session = d.pop("session", UNSET)

        ttl_seconds = d.pop("ttl_seconds", UNSET)

        value = d.pop("value", UNSET)

        wait_seconds = d.pop("wait_seconds", UNSET)

        campaign_request = cls(
            candidate=candidate,
            lock_delay_seconds=lock_delay_seconds,
            session=session,
            ttl_seconds=ttl_seconds,
            value=value,
            wait_seconds=wait_seconds,
        )


        campaign_request.additional_properties = d
        return campaign_request

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
