from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.lock_view import LockView





T = TypeVar("T", bound="LockFenceValid")



@_attrs_define
class LockFenceValid:
    """ The token is the fencing token of a lease that is live right now.

        Attributes:
            lock (LockView): A live lock.
            valid (bool): Always `true` here. Example: True.
     """

    lock: LockView
    valid: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.lock_view import LockView # noqa: PLC0415
        lock = self.lock.to_dict()

        valid = self.valid


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "lock": lock,
            "valid": valid,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.lock_view import LockView # noqa: PLC0415
        d = dict(src_dict)
        lock = LockView.from_dict(d.pop("lock"))




        valid = d.pop("valid")

        lock_fence_valid = cls(
            lock=lock,
            valid=valid,
        )


        lock_fence_valid.additional_properties = d
        return lock_fence_valid

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
