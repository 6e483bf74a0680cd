from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="HistoryRecordView")



@_attrs_define
class HistoryRecordView:
    """ One change to one lease.

        Attributes:
            at (datetime.datetime): When it was committed (RFC 3339, UTC, milliseconds), by the database's clock. Example:
                2026-11-29T21:32:27.123Z.
            event (str): What happened: `granted` (a new lease), `re-granted` (the holder acquired again),
                `renewed`, `released` (by its holder), `expired` (recorded when lockd saw it: at the next
                grant, or at a sweep), `force-released` (by an admin), `undone` (a grant nobody heard of). Example: granted.
            fencing_token (int): The lease's fencing token (an election's term). Example: 17.
            id (int): The record's position in the history: larger is later. The event stream's `id:`. Example: 1742.
            kind (str): What the lease is of: `lock` (exclusive or shared), `semaphore` or `election`. Example: lock.
            name (str): The lock's, semaphore's or election's name. Example: payment:42.
            owner (str): The lease's holder. Example: worker-7.
            shared (bool): Whether the lease was a shared (read) lease of a lock. Example: False.
            reason (str | Unset): Why, when someone said: the reason of a force-release. Absent otherwise. Example: worker-9
                is wedged (INC-4411).
            session (str | Unset): The session the lease is held under, when it is: its holder is then the session (whose
                owner label the owner shows) and it ends with the session. Absent otherwise. Example: q7Hc0mB1TzK4n9XwVd2aLg.
     """

    at: datetime.datetime
    event: str
    fencing_token: int
    id: int
    kind: str
    name: str
    owner: str
    shared: bool
    reason: str | Unset = UNSET
    session: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        event = self.event

        fencing_token = self.fencing_token

        id = self.id

        kind = self.kind

        name = self.name

        owner = self.owner

        shared = self.shared

        reason = self.reason

        session = self.session


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "event": event,
            "fencing_token": fencing_token,
            "id": id,
            "kind": kind,
            "name": name,
            "owner": owner,
            "shared": shared,
        })
        if reason is not UNSET:
            field_dict["reason"] = reason
        if session is not UNSET:
            field_dict["session"] = session

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))




        event = d.pop("event")

        fencing_token = d.pop("fencing_token")

        id = d.pop("id")

        kind = d.pop("kind")

        name = d.pop("name")

        owner = d.pop("owner")

        shared = d.pop("shared")

        reason = d.pop("reason", UNSET)

        session = d.pop("session", UNSET)

        history_record_view = cls(
            at=at,
            event=event,
            fencing_token=fencing_token,
            id=id,
            kind=kind,
            name=name,
            owner=owner,
            shared=shared,
            reason=reason,
            session=session,
        )


        history_record_view.additional_properties = d
        return history_record_view

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
