from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.hold_view import HoldView
  from ..models.session_view import SessionView





T = TypeVar("T", bound="SessionHoldsResponse")



@_attrs_define
class SessionHoldsResponse:
    """ A live session and its live holds.

        Attributes:
            holds (list[HoldView]):
            session (SessionView): A session: one lease that keeps every hold taken under it alive.
     """

    holds: list[HoldView]
    session: SessionView
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.hold_view import HoldView # noqa: PLC0415
        from ..models.session_view import SessionView # noqa: PLC0415
        holds = []
        for holds_item_data in self.holds:
            holds_item = holds_item_data.to_dict()
            holds.append(holds_item)



        session = self.session.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "holds": holds,
            "session": session,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hold_view import HoldView # noqa: PLC0415
        from ..models.session_view import SessionView # noqa: PLC0415
        d = dict(src_dict)
        holds = []
        _holds = d.pop("holds")
        for holds_item_data in (_holds):
            holds_item = HoldView.from_dict(holds_item_data)



            holds.append(holds_item)


        session = SessionView.from_dict(d.pop("session"))




        session_holds_response = cls(
            holds=holds,
            session=session,
        )


        session_holds_response.additional_properties = d
        return session_holds_response

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
