from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.permit_view import PermitView





T = TypeVar("T", bound="PermitGranted")



@_attrs_define
class PermitGranted:
    """ The caller holds the permits.

        Attributes:
            acquired (bool): Always `true` here. Example: True.
            permit (PermitView): One holder's grant on a semaphore. Example: {'acquired_at': '2026-11-29T21:32:27.123Z',
                'expires_at': '2026-11-29T21:32:57.123Z', 'fencing_token': 18, 'limit': 8, 'name': 'export', 'owner':
                'worker-7', 'permits': 2}.
     """

    acquired: bool
    permit: PermitView
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.permit_view import PermitView # noqa: PLC0415
        acquired = self.acquired

        permit = self.permit.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acquired": acquired,
            "permit": permit,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.permit_view import PermitView # noqa: PLC0415
        d = dict(src_dict)
        acquired = d.pop("acquired")

        permit = PermitView.from_dict(d.pop("permit"))




        permit_granted = cls(
            acquired=acquired,
            permit=permit,
        )


        permit_granted.additional_properties = d
        return permit_granted

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
