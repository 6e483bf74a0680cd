from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.history_record_view import HistoryRecordView





T = TypeVar("T", bound="HistoryList")



@_attrs_define
class HistoryList:
    """ A page of history, newest first.

        Attributes:
            records (list[HistoryRecordView]):
            next_cursor (str | Unset): Where the next (older) page starts: pass it as `cursor`. Absent on the last page. A
                page
                may hold fewer records than `limit`, even none, and still have one (a request reads a
                bounded part of a long history): follow it until it is absent. Example: 1742.
     """

    records: list[HistoryRecordView]
    next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.history_record_view import HistoryRecordView # noqa: PLC0415
        records = []
        for records_item_data in self.records:
            records_item = records_item_data.to_dict()
            records.append(records_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "records": records,
        })
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.history_record_view import HistoryRecordView # noqa: PLC0415
        d = dict(src_dict)
        records = []
        _records = d.pop("records")
        for records_item_data in (_records):
            records_item = HistoryRecordView.from_dict(records_item_data)



            records.append(records_item)


        next_cursor = d.pop("next_cursor", UNSET)

        history_list = cls(
            records=records,
            next_cursor=next_cursor,
        )


        history_list.additional_properties = d
        return history_list

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
