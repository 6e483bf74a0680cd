from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.permit_view import PermitView





T = TypeVar("T", bound="PermitFenceValid")



@_attrs_define
class PermitFenceValid:
    """ The token is the fencing token of a grant that is live right now.

        Attributes:
            permit (PermitView): One holder's grant on a semaphore. Example: {'acquired_at': '2026-11-29T21:32:27.123Z',
                'expires_at': '2026-11-29T21:32:57.123Z', 'fencing_token': 18, 'limit': 8, 'name': 'export', 'owner':
                'worker-7', 'permits': 2}.
            valid (bool): Always `true` here. Example: True.
     """

    permit: PermitView
    valid: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.permit_view import PermitView # noqa: PLC0415
        permit = self.permit.to_dict()

        valid = self.valid


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "permit": permit,
            "valid": valid,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.permit_view import PermitView # noqa: PLC0415
        d = dict(src_dict)
        permit = PermitView.from_dict(d.pop("permit"))




        valid = d.pop("valid")

        permit_fence_valid = cls(
            permit=permit,
            valid=valid,
        )


        permit_fence_valid.additional_properties = d
        return permit_fence_valid

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
