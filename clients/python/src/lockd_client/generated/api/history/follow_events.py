from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    prefix: str | Unset = UNSET,
    kinds: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id



    

    params: dict[str, Any] = {}

    params["prefix"] = prefix

    params["kinds"] = kinds


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/events",
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    prefix: str | Unset = UNSET,
    kinds: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow the tenant's events.

     A `text/event-stream` of every history record of the caller's tenant whose name starts with
    `prefix` and whose kind is among `kinds`, as it is committed, oldest first; records made
    through other servers of the same database arrive within about half a second. Each event is
    `id: <record id>` and `data: <record>` (as in the history routes); ids only grow. Send the
    last id received as `Last-Event-ID` to continue after it. A comment line comes every 15 s when
    nothing happens. When the database fails, the stream says so in a comment and ends: reconnect
    with `Last-Event-ID`.

    Args:
        prefix (str | Unset):
        kinds (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        prefix=prefix,
kinds=kinds,
last_event_id=last_event_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    prefix: str | Unset = UNSET,
    kinds: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow the tenant's events.

     A `text/event-stream` of every history record of the caller's tenant whose name starts with
    `prefix` and whose kind is among `kinds`, as it is committed, oldest first; records made
    through other servers of the same database arrive within about half a second. Each event is
    `id: <record id>` and `data: <record>` (as in the history routes); ids only grow. Send the
    last id received as `Last-Event-ID` to continue after it. A comment line comes every 15 s when
    nothing happens. When the database fails, the stream says so in a comment and ends: reconnect
    with `Last-Event-ID`.

    Args:
        prefix (str | Unset):
        kinds (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        client=client,
prefix=prefix,
kinds=kinds,
last_event_id=last_event_id,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    prefix: str | Unset = UNSET,
    kinds: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow the tenant's events.

     A `text/event-stream` of every history record of the caller's tenant whose name starts with
    `prefix` and whose kind is among `kinds`, as it is committed, oldest first; records made
    through other servers of the same database arrive within about half a second. Each event is
    `id: <record id>` and `data: <record>` (as in the history routes); ids only grow. Send the
    last id received as `Last-Event-ID` to continue after it. A comment line comes every 15 s when
    nothing happens. When the database fails, the stream says so in a comment and ends: reconnect
    with `Last-Event-ID`.

    Args:
        prefix (str | Unset):
        kinds (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        prefix=prefix,
kinds=kinds,
last_event_id=last_event_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    prefix: str | Unset = UNSET,
    kinds: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow the tenant's events.

     A `text/event-stream` of every history record of the caller's tenant whose name starts with
    `prefix` and whose kind is among `kinds`, as it is committed, oldest first; records made
    through other servers of the same database arrive within about half a second. Each event is
    `id: <record id>` and `data: <record>` (as in the history routes); ids only grow. Send the
    last id received as `Last-Event-ID` to continue after it. A comment line comes every 15 s when
    nothing happens. When the database fails, the stream says so in a comment and ends: reconnect
    with `Last-Event-ID`.

    Args:
        prefix (str | Unset):
        kinds (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        client=client,
prefix=prefix,
kinds=kinds,
last_event_id=last_event_id,

    )).parsed
