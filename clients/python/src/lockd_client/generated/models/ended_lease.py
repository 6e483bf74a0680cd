from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="EndedLease")



@_attrs_define
class EndedLease:
    """ One lease a force-release ended.

        Attributes:
            fencing_token (int): Its fencing token (an election's term). Example: 17.
            owner (str): Its holder. Example: worker-9.
            session (str | Unset): The session the lease is held under, when it is: its holder is then the session (whose
                owner label the owner shows) and it ends with the session. Absent otherwise. Example: q7Hc0mB1TzK4n9XwVd2aLg.
     """

    fencing_token: int
    owner: str
    session: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        fencing_token = self.fencing_token

        owner = self.owner

        session = self.session


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "fencing_token": fencing_token,
            "owner": owner,
        })
        if session is not UNSET:
            field_dict["session"] = session

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        fencing_token = d.pop("fencing_token")

        owner = d.pop("owner")

        session = d.pop("session", UNSET)

        ended_lease = cls(
            fencing_token=fencing_token,
            owner=owner,
            session=session,
        )


        ended_lease.additional_properties = d
        return ended_lease

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
