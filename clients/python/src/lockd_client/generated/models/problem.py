from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.field_error import FieldError





T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ An RFC 9457 problem details object, as every error answer carries it.

        Attributes:
            detail (str): What happened in this occurrence. Example: no live lock on resource "payment:42".
            instance (str): The request path. Example: /locks/payment:42.
            status (int): The HTTP status code of this answer. Example: 404.
            title (str): A short summary of the kind of problem. Example: Not Found.
            type_ (str): A URI reference identifying the kind of problem; it ends in the problem's slug. Example:
                /problems/not-found.
            allowed (int | Unset): `/problems/quota-exceeded` only: what that limit allows. Example: 1000.
            available_at (datetime.datetime | Unset): A 404 of a lock or an election whose last lease ran out less than its
                lock-delay ago
                only: when others may acquire it again (RFC 3339, UTC, milliseconds). Example: 2026-11-29T21:33:12.123Z.
            errors (list[FieldError] | Unset): The invalid inputs (422 only; absent otherwise, never `null`).
            limit (int | Unset): `/problems/limit-mismatch` only: the limit the holders use (live, or kept by a lock-delay).
                Example: 8.
            permits (int | Unset): `/problems/permits-mismatch` only: the permits the owner's live grant holds. Example: 2.
            quota (str | Unset): `/problems/quota-exceeded` only: the tenant's limit the request would go over
                (`max_live_leases`, `max_waiters`, `max_observers` or `max_ttl_seconds`). Example: max_live_leases.
     """

    detail: str
    instance: str
    status: int
    title: str
    type_: str
    allowed: int | Unset = UNSET
    available_at: datetime.datetime | Unset = UNSET
    errors: list[FieldError] | Unset = UNSET
    limit: int | Unset = UNSET
    permits: int | Unset = UNSET
    quota: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.field_error import FieldError # noqa: PLC0415
        detail = self.detail

        instance = self.instance

        status = self.status

        title = self.title

        type_ = self.type_

        allowed = self.allowed

        available_at: str | Unset = UNSET
        if not isinstance(self.available_at, Unset):
            available_at = self.available_at.isoformat()

        errors: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = []
            for errors_item_data in self.errors:
                errors_item = errors_item_data.to_dict()
                errors.append(errors_item)



        limit = self.limit

        permits = self.permits

        quota = self.quota


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "detail": detail,
            "instance": instance,
            "status": status,
            "title": title,
            "type": type_,
        })
        if allowed is not UNSET:
            field_dict["allowed"] = allowed
        if available_at is not UNSET:
            field_dict["available_at"] = available_at
        if errors is not UNSET:
            field_dict["errors"] = errors
        if limit is not UNSET:
            field_dict["limit"] = limit
        if permits is not UNSET:
            field_dict["permits"] = permits
        if quota is not UNSET:
            field_dict["quota"] = quota

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_error import FieldError # noqa: PLC0415
        d = dict(src_dict)
        detail = d.pop("detail")

        instance = d.pop("instance")

        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        allowed = d.pop("allowed", UNSET)

        _available_at = d.pop("available_at", UNSET)
        available_at: datetime.datetime | Unset
        if isinstance(_available_at,  Unset):
            available_at = UNSET
        else:
            available_at = datetime.datetime.fromisoformat(_available_at)




        _errors = d.pop("errors", UNSET)
        errors: list[FieldError] | Unset = UNSET
        if _errors is not UNSET:
            errors = []
            for errors_item_data in _errors:
                errors_item = FieldError.from_dict(errors_item_data)



                errors.append(errors_item)


        limit = d.pop("limit", UNSET)

        permits = d.pop("permits", UNSET)

        quota = d.pop("quota", UNSET)

        problem = cls(
            detail=detail,
            instance=instance,
            status=status,
            title=title,
            type_=type_,
            allowed=allowed,
            available_at=available_at,
            errors=errors,
            limit=limit,
            permits=permits,
            quota=quota,
        )


        problem.additional_properties = d
        return problem

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
