from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.leader_view import LeaderView





T = TypeVar("T", bound="ElectionFenceValid")



@_attrs_define
class ElectionFenceValid:
    """ The term is the term of the leader in office right now.

        Attributes:
            leader (LeaderView): The leader of an election.
            valid (bool): Always `true` here. Example: True.
     """

    leader: LeaderView
    valid: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.leader_view import LeaderView # noqa: PLC0415
        leader = self.leader.to_dict()

        valid = self.valid


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "leader": leader,
            "valid": valid,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.leader_view import LeaderView # noqa: PLC0415
        d = dict(src_dict)
        leader = LeaderView.from_dict(d.pop("leader"))




        valid = d.pop("valid")

        election_fence_valid = cls(
            leader=leader,
            valid=valid,
        )


        election_fence_valid.additional_properties = d
        return election_fence_valid

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
