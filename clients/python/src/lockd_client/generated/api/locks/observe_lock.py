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
    resource: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/locks/{resource}/observe".format(resource=quote(str(resource), safe=""),),
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

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())



        return response_500

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
    resource: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | str]:
    """ Observe a lock.

     A `text/event-stream` (Server-Sent Events). The first event is the lock's state
    (`event: state`, `{"resource", "holders": [lock, …]}`, no holders when it is free); then one
    event per change of a holder's lease: `acquired` (a new grant, or the holder granted again),
    `renewed`, `released` (ended before its `expires_at`: released or undone) and `expired`, each
    with the lock of that holder (its owner and fencing token). Every event has an `id:` that only
    grows; a client that reconnects (with `Last-Event-ID`) gets the current state first. Changes
    made through this server arrive at once, the expiry of a lease within a few milliseconds of
    its `expires_at`, changes through other servers within about half a second (a change that
    another server makes and undoes within that time may not be seen). A comment line comes every
    15 s when nothing happens.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        resource=resource,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    resource: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Observe a lock.

     A `text/event-stream` (Server-Sent Events). The first event is the lock's state
    (`event: state`, `{"resource", "holders": [lock, …]}`, no holders when it is free); then one
    event per change of a holder's lease: `acquired` (a new grant, or the holder granted again),
    `renewed`, `released` (ended before its `expires_at`: released or undone) and `expired`, each
    with the lock of that holder (its owner and fencing token). Every event has an `id:` that only
    grows; a client that reconnects (with `Last-Event-ID`) gets the current state first. Changes
    made through this server arrive at once, the expiry of a lease within a few milliseconds of
    its `expires_at`, changes through other servers within about half a second (a change that
    another server makes and undoes within that time may not be seen). A comment line comes every
    15 s when nothing happens.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        resource=resource,
client=client,

    ).parsed

async def asyncio_detailed(
    resource: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | str]:
    """ Observe a lock.

     A `text/event-stream` (Server-Sent Events). The first event is the lock's state
    (`event: state`, `{"resource", "holders": [lock, …]}`, no holders when it is free); then one
    event per change of a holder's lease: `acquired` (a new grant, or the holder granted again),
    `renewed`, `released` (ended before its `expires_at`: released or undone) and `expired`, each
    with the lock of that holder (its owner and fencing token). Every event has an `id:` that only
    grows; a client that reconnects (with `Last-Event-ID`) gets the current state first. Changes
    made through this server arrive at once, the expiry of a lease within a few milliseconds of
    its `expires_at`, changes through other servers within about half a second (a change that
    another server makes and undoes within that time may not be seen). A comment line comes every
    15 s when nothing happens.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        resource=resource,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    resource: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Observe a lock.

     A `text/event-stream` (Server-Sent Events). The first event is the lock's state
    (`event: state`, `{"resource", "holders": [lock, …]}`, no holders when it is free); then one
    event per change of a holder's lease: `acquired` (a new grant, or the holder granted again),
    `renewed`, `released` (ended before its `expires_at`: released or undone) and `expired`, each
    with the lock of that holder (its owner and fencing token). Every event has an `id:` that only
    grows; a client that reconnects (with `Last-Event-ID`) gets the current state first. Changes
    made through this server arrive at once, the expiry of a lease within a few milliseconds of
    its `expires_at`, changes through other servers within about half a second (a change that
    another server makes and undoes within that time may not be seen). A comment line comes every
    15 s when nothing happens.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        resource=resource,
client=client,

    )).parsed
