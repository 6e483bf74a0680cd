from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.leader_view import LeaderView





T = TypeVar("T", bound="CampaignResponse")



@_attrs_define
class CampaignResponse:
    """ The answer to a campaign: `elected: true` with the candidate as leader, or `elected: false`
    with whoever leads (`null` when the office fell vacant just after).

        Attributes:
            elected (bool): Whether the candidate leads now. Example: True.
            leader (LeaderView | None): The leader: the candidate when elected; otherwise whoever leads, or `null` when no
                one does.
     """

    elected: bool
    leader: LeaderView | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.leader_view import LeaderView # noqa: PLC0415
        elected = self.elected

        leader: dict[str, Any] | None
        if isinstance(self.leader, LeaderView):
            leader = self.leader.to_dict()
        else:
            leader = self.leader


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "elected": elected,
            "leader": leader,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.leader_view import LeaderView # noqa: PLC0415
        d = dict(src_dict)
        elected = d.pop("elected")

        def _parse_leader(data: object) -> LeaderView | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                leader_type_0 = LeaderView.from_dict(data)



                return leader_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LeaderView | None, data)

        leader = _parse_leader(d.pop("leader"))


        campaign_response = cls(
            elected=elected,
            leader=leader,
        )


        campaign_response.additional_properties = d
        return campaign_response

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
