from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.lock_view import LockView





T = TypeVar("T", bound="MultiGranted")



@_attrs_define
class MultiGranted:
    """ The caller holds every lock it asked for.

        Attributes:
            acquired (bool): Always `true` here. Example: True.
            locks (list[LockView]): The locks, in request order, each with its own fencing token.
     """

    acquired: bool
    locks: list[LockView]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.lock_view import LockView # noqa: PLC0415
        acquired = self.acquired

        locks = []
        for locks_item_data in self.locks:
            locks_item = locks_item_data.to_dict()
            locks.append(locks_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acquired": acquired,
            "locks": locks,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.lock_view import LockView # noqa: PLC0415
        d = dict(src_dict)
        acquired = d.pop("acquired")

        locks = []
        _locks = d.pop("locks")
        for locks_item_data in (_locks):
            locks_item = LockView.from_dict(locks_item_data)



            locks.append(locks_item)


        multi_granted = cls(
            acquired=acquired,
            locks=locks,
        )


        multi_granted.additional_properties = d
        return multi_granted

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
