from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.multi_acquire_request_locks_item_mode import MultiAcquireRequestLocksItemMode
from ..types import UNSET, Unset






T = TypeVar("T", bound="MultiAcquireRequestLocksItem")



@_attrs_define
class MultiAcquireRequestLocksItem:
    """ 
        Attributes:
            resource (str): A lock to take (resource name rules).
            mode (MultiAcquireRequestLocksItemMode | Unset): `exclusive` (the default): one holder excludes every other.
                `shared`: shared holders coexist, each with its own lease and fencing token, and an exclusive holder excludes
                them all. While an exclusive acquire waits on a server, later shared acquires on that server queue behind it. An
                owner holding the lock in the other mode gets 409 `/problems/mode-mismatch` (no upgrade or downgrade in place).
                Default: MultiAcquireRequestLocksItemMode.EXCLUSIVE. Example: shared.
     """

    resource: str
    mode: MultiAcquireRequestLocksItemMode | Unset = MultiAcquireRequestLocksItemMode.EXCLUSIVE
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        resource = self.resource

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "resource": resource,
        })
        if mode is not UNSET:
            field_dict["mode"] = mode

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        resource = d.pop("resource")

        _mode = d.pop("mode", UNSET)
        mode: MultiAcquireRequestLocksItemMode | Unset
        if isinstance(_mode,  Unset):
            mode = UNSET
        else:
            mode = MultiAcquireRequestLocksItemMode(_mode)




        multi_acquire_request_locks_item = cls(
            resource=resource,
            mode=mode,
        )


        multi_acquire_request_locks_item.additional_properties = d
        return multi_acquire_request_locks_item

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
