from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.semaphore_view import SemaphoreView





T = TypeVar("T", bound="SemaphoreList")



@_attrs_define
class SemaphoreList:
    """ One page of a listing of semaphores.

        Attributes:
            semaphores (list[SemaphoreView]): The semaphores of this page that have a live holder, by name, bytewise.
            next_cursor (str | Unset): Pass as `cursor` for the next page. Absent on the last page.
     """

    semaphores: list[SemaphoreView]
    next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.semaphore_view import SemaphoreView # noqa: PLC0415
        semaphores = []
        for semaphores_item_data in self.semaphores:
            semaphores_item = semaphores_item_data.to_dict()
            semaphores.append(semaphores_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "semaphores": semaphores,
        })
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.semaphore_view import SemaphoreView # noqa: PLC0415
        d = dict(src_dict)
        semaphores = []
        _semaphores = d.pop("semaphores")
        for semaphores_item_data in (_semaphores):
            semaphores_item = SemaphoreView.from_dict(semaphores_item_data)



            semaphores.append(semaphores_item)


        next_cursor = d.pop("next_cursor", UNSET)

        semaphore_list = cls(
            semaphores=semaphores,
            next_cursor=next_cursor,
        )


        semaphore_list.additional_properties = d
        return semaphore_list

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
