from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from typing import cast

if TYPE_CHECKING:
  from ..models.lock_view import LockView





T = TypeVar("T", bound="SharedHold")



@_attrs_define
class SharedHold:
    """ A lock held in shared mode: every live holder, in fencing-token order.

        Example:
            {'holders': [{'acquired_at': '2026-11-29T21:32:27.123Z', 'expires_at': '2026-11-29T21:32:57.123Z',
                'fencing_token': 17, 'mode': 'shared', 'owner': 'reader-1', 'resource': 'report:2026-11'}, {'acquired_at':
                '2026-11-29T21:32:28.001Z', 'expires_at': '2026-11-29T21:33:28.001Z', 'fencing_token': 18, 'mode': 'shared',
                'owner': 'reader-2', 'resource': 'report:2026-11'}], 'mode': 'shared', 'resource': 'report:2026-11'}

        Attributes:
            holders (list[LockView]): The live shared holders, each with its own lease and fencing token.
            mode (Mode): How a lock is held: `exclusive` (one holder excludes every other) or `shared` (shared holders
                coexist, each with its own lease and fencing token).
            resource (str): The locked resource name. Example: report:2026-11.
     """

    holders: list[LockView]
    mode: Mode
    resource: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.lock_view import LockView # noqa: PLC0415
        holders = []
        for holders_item_data in self.holders:
            holders_item = holders_item_data.to_dict()
            holders.append(holders_item)



        mode = self.mode.value

        resource = self.resource


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "holders": holders,
            "mode": mode,
            "resource": resource,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.lock_view import LockView # noqa: PLC0415
        d = dict(src_dict)
        holders = []
        _holders = d.pop("holders")
        for holders_item_data in (_holders):
            holders_item = LockView.from_dict(holders_item_data)



            holders.append(holders_item)


        mode = Mode(d.pop("mode"))




        resource = d.pop("resource")

        shared_hold = cls(
            holders=holders,
            mode=mode,
            resource=resource,
        )


        shared_hold.additional_properties = d
        return shared_hold

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
