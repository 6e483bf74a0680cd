from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.permit_view import PermitView





T = TypeVar("T", bound="SemaphoreView")



@_attrs_define
class SemaphoreView:
    """ A semaphore and its live holders.

        Attributes:
            available (int): `limit - in_use`. Example: 6.
            holders (list[PermitView]): The live holders, by fencing token.
            in_use (int): The permits the live holders take. Example: 2.
            limit (int): The limit its live holders use. Example: 8.
            name (str): The semaphore's name. Example: export.
            waiting (int): Acquires waiting for permits of this semaphore on this server. Example: 0.
     """

    available: int
    holders: list[PermitView]
    in_use: int
    limit: int
    name: str
    waiting: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.permit_view import PermitView # noqa: PLC0415
        available = self.available

        holders = []
        for holders_item_data in self.holders:
            holders_item = holders_item_data.to_dict()
            holders.append(holders_item)



        in_use = self.in_use

        limit = self.limit

        name = self.name

        waiting = self.waiting


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "available": available,
            "holders": holders,
            "in_use": in_use,
            "limit": limit,
            "name": name,
            "waiting": waiting,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.permit_view import PermitView # noqa: PLC0415
        d = dict(src_dict)
        available = d.pop("available")

        holders = []
        _holders = d.pop("holders")
        for holders_item_data in (_holders):
            holders_item = PermitView.from_dict(holders_item_data)



            holders.append(holders_item)


        in_use = d.pop("in_use")

        limit = d.pop("limit")

        name = d.pop("name")

        waiting = d.pop("waiting")

        semaphore_view = cls(
            available=available,
            holders=holders,
            in_use=in_use,
            limit=limit,
            name=name,
            waiting=waiting,
        )


        semaphore_view.additional_properties = d
        return semaphore_view

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
