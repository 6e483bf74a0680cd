from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    name: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/elections/{name}/observe".format(name=quote(str(name), safe=""),),
    }


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
    name: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | str]:
    """ Observe an election.

     A `text/event-stream`. The first event is the current state: `event: leader` with the leader,
    or `event: vacant`. Then one event per change: `leader` for a new leader (a new term) or a
    proclaimed value, `vacant` when the leader resigned (`"reason": "resigned"`) or its lease ran
    out (`"reason": "expired"`), with the term that ended. Renewals are not events. Ids, timing
    and keep-alive comments as for a lock.

    Args:
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        name=name,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    name: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Observe an election.

     A `text/event-stream`. The first event is the current state: `event: leader` with the leader,
    or `event: vacant`. Then one event per change: `leader` for a new leader (a new term) or a
    proclaimed value, `vacant` when the leader resigned (`"reason": "resigned"`) or its lease ran
    out (`"reason": "expired"`), with the term that ended. Renewals are not events. Ids, timing
    and keep-alive comments as for a lock.

    Args:
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        name=name,
client=client,

    ).parsed

async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | str]:
    """ Observe an election.

     A `text/event-stream`. The first event is the current state: `event: leader` with the leader,
    or `event: vacant`. Then one event per change: `leader` for a new leader (a new term) or a
    proclaimed value, `vacant` when the leader resigned (`"reason": "resigned"`) or its lease ran
    out (`"reason": "expired"`), with the term that ended. Renewals are not events. Ids, timing
    and keep-alive comments as for a lock.

    Args:
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        name=name,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Observe an election.

     A `text/event-stream`. The first event is the current state: `event: leader` with the leader,
    or `event: vacant`. Then one event per change: `leader` for a new leader (a new term) or a
    proclaimed value, `vacant` when the leader resigned (`"reason": "resigned"`) or its lease ran
    out (`"reason": "expired"`), with the term that ended. Renewals are not events. Ids, timing
    and keep-alive comments as for a lock.

    Args:
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        name=name,
client=client,

    )).parsed
