from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.release_one import ReleaseOne





T = TypeVar("T", bound="ReleaseManyResponse")



@_attrs_define
class ReleaseManyResponse:
    """ What a release of several locks did with each.

        Example:
            {'results': [{'fencing_token': 41, 'resource': 'account:1', 'result': 'released'}, {'resource': 'account:2',
                'result': 'not_found'}]}

        Attributes:
            results (list[ReleaseOne]): One entry per resource, in request order.
     """

    results: list[ReleaseOne]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.release_one import ReleaseOne # noqa: PLC0415
        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "results": results,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.release_one import ReleaseOne # noqa: PLC0415
        d = dict(src_dict)
        results = []
        _results = d.pop("results")
        for results_item_data in (_results):
            results_item = ReleaseOne.from_dict(results_item_data)



            results.append(results_item)


        release_many_response = cls(
            results=results,
        )


        release_many_response.additional_properties = d
        return release_many_response

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
