from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.lock_view import LockView





T = TypeVar("T", bound="AcquireGranted")



@_attrs_define
class AcquireGranted:
    """ The caller holds the lock.

        Attributes:
            acquired (bool): Always `true` here. Example: True.
            lock (LockView): A live lock.
     """

    acquired: bool
    lock: LockView
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.lock_view import LockView # noqa: PLC0415
        acquired = self.acquired

        lock = self.lock.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acquired": acquired,
            "lock": lock,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.lock_view import LockView # noqa: PLC0415
        d = dict(src_dict)
        acquired = d.pop("acquired")

        lock = LockView.from_dict(d.pop("lock"))




        acquire_granted = cls(
            acquired=acquired,
            lock=lock,
        )


        acquire_granted.additional_properties = d
        return acquire_granted

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
