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
    name: str,
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
        "url": "/semaphores/{name}/history".format(name=quote(str(name), safe=""),),
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
    name: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> Response[HistoryList | Problem]:
    """ A semaphore's history.

     As a lock's: every change to a grant of the semaphore, newest first.

    Args:
        name (str):
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
        name=name,
limit=limit,
cursor=cursor,
since=since,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    name: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> HistoryList | Problem | None:
    """ A semaphore's history.

     As a lock's: every change to a grant of the semaphore, newest first.

    Args:
        name (str):
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
        name=name,
client=client,
limit=limit,
cursor=cursor,
since=since,

    ).parsed

async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> Response[HistoryList | Problem]:
    """ A semaphore's history.

     As a lock's: every change to a grant of the semaphore, newest first.

    Args:
        name (str):
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
        name=name,
limit=limit,
cursor=cursor,
since=since,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,

) -> HistoryList | Problem | None:
    """ A semaphore's history.

     As a lock's: every change to a grant of the semaphore, newest first.

    Args:
        name (str):
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
        name=name,
client=client,
limit=limit,
cursor=cursor,
since=since,

    )).parsed
