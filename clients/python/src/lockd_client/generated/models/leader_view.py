from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="LeaderView")



@_attrs_define
class LeaderView:
    """ The leader of an election.

        Attributes:
            candidate (str): The leader, as it named itself (trimmed). Example: node-a.
            elected_at (datetime.datetime): When the leader's lease was last granted (RFC 3339, UTC, milliseconds). Example:
                2026-11-29T21:32:27.123Z.
            election (str): The election's name. Example: scheduler.
            expires_at (datetime.datetime): When the leader's lease ends unless renewed (RFC 3339, UTC, milliseconds).
                Example: 2026-11-29T21:32:42.123Z.
            term (int): The leader's fencing token: larger than every earlier leader's. Kept while the same leader
                renews, proclaims or campaigns again. Example: 42.
            session (str | Unset): The session the lease is held under, when it is: its holder is then the session (whose
                owner label the candidate shows) and it ends with the session. Absent otherwise. Example:
                q7Hc0mB1TzK4n9XwVd2aLg.
            value (Any | Unset): What the leader proclaims (set by its campaign or a proclaim); absent when never set.
     """

    candidate: str
    elected_at: datetime.datetime
    election: str
    expires_at: datetime.datetime
    term: int
    session: str | Unset = UNSET
    value: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        candidate = self.candidate

        elected_at = self.elected_at.isoformat()

        election = self.election

        expires_at = self.expires_at.isoformat()

        term = self.term

        session = self.session

        value = self.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "candidate": candidate,
            "elected_at": elected_at,
            "election": election,
            "expires_at": expires_at,
            "term": term,
        })
        if session is not UNSET:
            field_dict["session"] = session
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        candidate = d.pop("candidate")

        elected_at = datetime.datetime.fromisoformat(d.pop("elected_at"))




        election = d.pop("election")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))




        term = d.pop("term")

        session = d.pop("session", UNSET)

        value = d.pop("value", UNSET)

        leader_view = cls(
            candidate=candidate,
            elected_at=elected_at,
            election=election,
            expires_at=expires_at,
            term=term,
            session=session,
            value=value,
        )


        leader_view.additional_properties = d
        return leader_view

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
