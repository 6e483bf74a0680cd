from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.listed_election_view import ListedElectionView





T = TypeVar("T", bound="ElectionList")



@_attrs_define
class ElectionList:
    """ One page of the elections that have a leader.

        Attributes:
            elections (list[ListedElectionView]):
            next_cursor (str | Unset): Where the next page starts: pass it as `cursor`. Absent on the last page. Example:
                AXNjaGVkdWxlcg.
     """

    elections: list[ListedElectionView]
    next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.listed_election_view import ListedElectionView # noqa: PLC0415
        elections = []
        for elections_item_data in self.elections:
            elections_item = elections_item_data.to_dict()
            elections.append(elections_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "elections": elections,
        })
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.listed_election_view import ListedElectionView # noqa: PLC0415
        d = dict(src_dict)
        elections = []
        _elections = d.pop("elections")
        for elections_item_data in (_elections):
            elections_item = ListedElectionView.from_dict(elections_item_data)



            elections.append(elections_item)


        next_cursor = d.pop("next_cursor", UNSET)

        election_list = cls(
            elections=elections,
            next_cursor=next_cursor,
        )


        election_list.additional_properties = d
        return election_list

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
