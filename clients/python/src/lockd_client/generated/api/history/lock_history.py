from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.history_list import HistoryList
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
import datetime



def _get_kwargs(
    resource: str,
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    json_since: str | Unset = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/locks/{resource}/history".format(resource=quote(str(resource), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> HistoryList | Problem | None:
    if response.status_code == 200:
        response_200 = HistoryList.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[HistoryList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    resource: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> Response[HistoryList | Problem]:
    """ A lock's history.

     Every change to a lease of the lock, newest first: `granted`, `re-granted`, `renewed`,
    `released`, `expired`, `force-released` and `undone`, each with its holder, fencing token
    and the database's time, recorded in the same transaction as the change. Shared (read)
    leases have `shared: true`. An expiry is recorded when lockd sees it: at the next grant, or at
    a sweep (`--sweep-interval-seconds`, a minute after the lease's end). Records are kept for
    `--history-retention-hours`. When more follow, `next_cursor` is set: pass it as `cursor`.

    Args:
        resource (str):
        limit (int | Unset):
        cursor (str | Unset):
        since (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HistoryList | Problem]
     """


    kwargs = _get_kwargs(
        resource=resource,
limit=limit,
cursor=cursor,
since=since,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    resource: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> HistoryList | Problem | None:
    """ A lock's history.

     Every change to a lease of the lock, newest first: `granted`, `re-granted`, `renewed`,
    `released`, `expired`, `force-released` and `undone`, each with its holder, fencing token
    and the database's time, recorded in the same transaction as the change. Shared (read)
    leases have `shared: true`. An expiry is recorded when lockd sees it: at the next grant, or at
    a sweep (`--sweep-interval-seconds`, a minute after the lease's end). Records are kept for
    `--history-retention-hours`. When more follow, `next_cursor` is set: pass it as `cursor`.

    Args:
        resource (str):
        limit (int | Unset):
        cursor (str | Unset):
        since (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HistoryList | Problem
     """


    return sync_detailed(
        resource=resource,
client=client,
limit=limit,
cursor=cursor,
since=since,

    ).parsed

async def asyncio_detailed(
    resource: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> Response[HistoryList | Problem]:
    """ A lock's history.

     Every change to a lease of the lock, newest first: `granted`, `re-granted`, `renewed`,
    `released`, `expired`, `force-released` and `undone`, each with its holder, fencing token
    and the database's time, recorded in the same transaction as the change. Shared (read)
    leases have `shared: true`. An expiry is recorded when lockd sees it: at the next grant, or at
    a sweep (`--sweep-interval-seconds`, a minute after the lease's end). Records are kept for
    `--history-retention-hours`. When more follow, `next_cursor` is set: pass it as `cursor`.

    Args:
        resource (str):
        limit (int | Unset):
        cursor (str | Unset):
        since (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HistoryList | Problem]
     """


    kwargs = _get_kwargs(
        resource=resource,
limit=limit,
cursor=cursor,
since=since,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    resource: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> HistoryList | Problem | None:
    """ A lock's history.

     Every change to a lease of the lock, newest first: `granted`, `re-granted`, `renewed`,
    `released`, `expired`, `force-released` and `undone`, each with its holder, fencing token
    and the database's time, recorded in the same transaction as the change. Shared (read)
    leases have `shared: true`. An expiry is recorded when lockd sees it: at the next grant, or at
    a sweep (`--sweep-interval-seconds`, a minute after the lease's end). Records are kept for
    `--history-retention-hours`. When more follow, `next_cursor` is set: pass it as `cursor`.

    Args:
        resource (str):
        limit (int | Unset):
        cursor (str | Unset):
        since (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HistoryList | Problem
     """


    return (await asyncio_detailed(
        resource=resource,
client=client,
limit=limit,
cursor=cursor,
since=since,

    )).parsed
