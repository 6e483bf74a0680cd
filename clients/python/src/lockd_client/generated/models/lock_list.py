from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.listed_lock_view import ListedLockView





T = TypeVar("T", bound="LockList")



@_attrs_define
class LockList:
    """ One page of a listing.

        Example:
            {'locks': [{'acquired_at': '2026-11-29T21:32:27.123Z', 'expires_at': '2026-11-29T21:32:57.123Z',
                'fencing_token': 17, 'mode': 'exclusive', 'owner': 'worker-7', 'resource': 'payment:42', 'ttl_remaining_ms':
                29873, 'waiting': 0}], 'next_cursor': 'AXBheW1lbnQ6NDI'}

        Attributes:
            locks (list[ListedLockView]): The live locks of this page, by resource name, bytewise.
            next_cursor (str | Unset): Pass as `cursor` for the next page. Absent on the last page.
     """

    locks: list[ListedLockView]
    next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.listed_lock_view import ListedLockView # noqa: PLC0415
        locks = []
        for locks_item_data in self.locks:
            locks_item = locks_item_data.to_dict()
            locks.append(locks_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "locks": locks,
        })
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.listed_lock_view import ListedLockView # noqa: PLC0415
        d = dict(src_dict)
        locks = []
        _locks = d.pop("locks")
        for locks_item_data in (_locks):
            locks_item = ListedLockView.from_dict(locks_item_data)



            locks.append(locks_item)


        next_cursor = d.pop("next_cursor", UNSET)

        lock_list = cls(
            locks=locks,
            next_cursor=next_cursor,
        )


        lock_list.additional_properties = d
        return lock_list

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
