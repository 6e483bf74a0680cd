from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.ended_lease import EndedLease





T = TypeVar("T", bound="ForceReleasedResponse")



@_attrs_define
class ForceReleasedResponse:
    """ What a force-release ended: every live lease of the name.

        Example:
            {'force_released': [{'fencing_token': 17, 'owner': 'worker-9'}]}

        Attributes:
            force_released (list[EndedLease]):
     """

    force_released: list[EndedLease]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.ended_lease import EndedLease # noqa: PLC0415
        force_released = []
        for force_released_item_data in self.force_released:
            force_released_item = force_released_item_data.to_dict()
            force_released.append(force_released_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "force_released": force_released,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.ended_lease import EndedLease # noqa: PLC0415
        d = dict(src_dict)
        force_released = []
        _force_released = d.pop("force_released")
        for force_released_item_data in (_force_released):
            force_released_item = EndedLease.from_dict(force_released_item_data)



            force_released.append(force_released_item)


        force_released_response = cls(
            force_released=force_released,
        )


        force_released_response.additional_properties = d
        return force_released_response

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
