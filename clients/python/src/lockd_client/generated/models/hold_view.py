from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.mode import Mode
from ..types import UNSET, Unset






T = TypeVar("T", bound="HoldView")



@_attrs_define
class HoldView:
    """ What a session holds: `lock` (with its `mode`), `semaphore` (with its `permits`) or
    `election` (a leadership, with its `term`).

        Attributes:
            fencing_token (int): The hold's own fencing token (an election's: its term). Example: 17.
            kind (str):  Example: lock.
            name (str): The lock's, semaphore's or election's name. Example: payment:42.
            mode (Mode | Unset): How a lock is held: `exclusive` (one holder excludes every other) or `shared` (shared
                holders
                coexist, each with its own lease and fencing token).
            permits (int | Unset): A semaphore's permits held. Example: 2.
            term (int | Unset): An election's term (the leader's fencing token). Example: 42.
     """

    fencing_token: int
    kind: str
    name: str
    mode: Mode | Unset = UNSET
    permits: int | Unset = UNSET
    term: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        fencing_token = self.fencing_token

        kind = self.kind

        name = self.name

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value


        permits = self.permits

        term = self.term


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "fencing_token": fencing_token,
            "kind": kind,
            "name": name,
        })
        if mode is not UNSET:
            field_dict["mode"] = mode
        if permits is not UNSET:
            field_dict["permits"] = permits
        if term is not UNSET:
            field_dict["term"] = term

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        fencing_token = d.pop("fencing_token")

        kind = d.pop("kind")

        name = d.pop("name")

        _mode = d.pop("mode", UNSET)
        mode: Mode | Unset
        if isinstance(_mode,  Unset):
            mode = UNSET
        else:
            mode = Mode(_mode)




        permits = d.pop("permits", UNSET)

        term = d.pop("term", UNSET)

        hold_view = cls(
            fencing_token=fencing_token,
            kind=kind,
            name=name,
            mode=mode,
            permits=permits,
            term=term,
        )


        hold_view.additional_properties = d
        return hold_view

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
