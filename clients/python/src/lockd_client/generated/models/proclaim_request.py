from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.proclaim_request_value_type_0 import ProclaimRequestValueType0





T = TypeVar("T", bound="ProclaimRequest")



@_attrs_define
class ProclaimRequest:
    """ Proclaim a new value as the leader. Unknown fields are ignored.

        Attributes:
            value (bool | float | list[Any] | ProclaimRequestValueType0 | str): The new value, replacing the leader's. Any
                JSON value but `null`, whose compact text is at most 4096 bytes (larger: 422 `too_long`).
            candidate (str | Unset): The leader (required unless the leader is a session, given as `session`): trimmed of
                surrounding whitespace, then 1 to 255 characters, no control characters. Compared case-sensitively. Example:
                worker-7.
            session (str | Unset): Hold under a session: the id of a live session of the tenant (22 characters of URL-safe
                base64, as `POST /sessions` answered it). The session is the holder: its owner label shows as the hold's owner,
                its end is the hold's end (moved by each keepalive), and its lock-delay applies when it runs out. Not together
                with the holder's name, `ttl_seconds` or `lock_delay_seconds` (422 `conflict`); an unknown or ended session is
                404 /problems/session-not-found, and nothing is granted. Example: q7Hc0mB1TzK4n9XwVd2aLg.
     """

    value: bool | float | list[Any] | ProclaimRequestValueType0 | str
    candidate: str | Unset = UNSET
    session: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.proclaim_request_value_type_0 import ProclaimRequestValueType0 # noqa: PLC0415
        value: bool | dict[str, Any] | float | list[Any] | str
        if isinstance(self.value, ProclaimRequestValueType0):
            value = self.value.to_dict()
        elif isinstance(self.value, list):
            value = self.value


        else:
            value = self.value

        candidate = self.candidate

        session = self.session


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "value": value,
        })
        if candidate is not UNSET:
            field_dict["candidate"] = candidate
        if session is not UNSET:
            field_dict["session"] = session

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.proclaim_request_value_type_0 import ProclaimRequestValueType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_value(data: object) -> bool | float | list[Any] | ProclaimRequestValueType0 | str:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                value_type_0 = ProclaimRequestValueType0.from_dict(data)



                return value_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, list):
                    raise TypeError()
                value_type_1 = cast(list[Any], data)

                return value_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(bool | float | list[Any] | ProclaimRequestValueType0 | str, data)

        value = _parse_value(d.pop("value"))


        candidate = d.pop("candidate", UNSET)

        session = d.pop("session", UNSET)

        proclaim_request = cls(
            value=value,
            candidate=candidate,
            session=session,
        )


        proclaim_request.additional_properties = d
        return proclaim_request

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
