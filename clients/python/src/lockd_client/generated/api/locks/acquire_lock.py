from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.acquire_granted import AcquireGranted
from ...models.acquire_held import AcquireHeld
from ...models.acquire_request import AcquireRequest
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    resource: str,
    *,
    body: AcquireRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/locks/{resource}".format(resource=quote(str(resource), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AcquireGranted | AcquireHeld | Problem | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> AcquireGranted | AcquireHeld:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_acquire_response_type_0 = AcquireGranted.from_dict(data)



                return componentsschemas_acquire_response_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_acquire_response_type_1 = AcquireHeld.from_dict(data)



            return componentsschemas_acquire_response_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())



        return response_408

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[AcquireGranted | AcquireHeld | Problem]:
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
    body: AcquireRequest,

) -> Response[AcquireGranted | AcquireHeld | Problem]:
    """ Acquire a lock.

     Grants the lock when the resource is free, its lock has expired, or the caller already holds
    it (then the lease restarts from now and the fencing token is kept). When another owner holds
    a live lock the answer is still 200, with `acquired: false`: retry later.

    With `mode: shared`, shared holders coexist, each with its own lease and fencing token, and
    an exclusive holder excludes them all. While an exclusive acquire waits for the lock on a
    server, later shared acquires on that server queue behind it (`acquired: false` without a
    wait). Renew and release work as for an exclusive lock.

    With `wait_seconds`, the request waits up to that long for the lock instead: waiters of one
    lock are served in arrival order (on each server), and the answer comes as soon as the lock
    is granted (released on any server sharing the database, or expired), or with
    `acquired: false` and a `Retry-After` header when the wait ends. A waiter whose client closes
    the connection leaves the queue at once and is never granted the lock.

    Args:
        resource (str):
        body (AcquireRequest): Acquire a lock. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcquireGranted | AcquireHeld | Problem]
     """


    kwargs = _get_kwargs(
        resource=resource,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    resource: str,
    *,
    client: AuthenticatedClient,
    body: AcquireRequest,

) -> AcquireGranted | AcquireHeld | Problem | None:
    """ Acquire a lock.

     Grants the lock when the resource is free, its lock has expired, or the caller already holds
    it (then the lease restarts from now and the fencing token is kept). When another owner holds
    a live lock the answer is still 200, with `acquired: false`: retry later.

    With `mode: shared`, shared holders coexist, each with its own lease and fencing token, and
    an exclusive holder excludes them all. While an exclusive acquire waits for the lock on a
    server, later shared acquires on that server queue behind it (`acquired: false` without a
    wait). Renew and release work as for an exclusive lock.

    With `wait_seconds`, the request waits up to that long for the lock instead: waiters of one
    lock are served in arrival order (on each server), and the answer comes as soon as the lock
    is granted (released on any server sharing the database, or expired), or with
    `acquired: false` and a `Retry-After` header when the wait ends. A waiter whose client closes
    the connection leaves the queue at once and is never granted the lock.

    Args:
        resource (str):
        body (AcquireRequest): Acquire a lock. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcquireGranted | AcquireHeld | Problem
     """


    return sync_detailed(
        resource=resource,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    resource: str,
    *,
    client: AuthenticatedClient,
    body: AcquireRequest,

) -> Response[AcquireGranted | AcquireHeld | Problem]:
    """ Acquire a lock.

     Grants the lock when the resource is free, its lock has expired, or the caller already holds
    it (then the lease restarts from now and the fencing token is kept). When another owner holds
    a live lock the answer is still 200, with `acquired: false`: retry later.

    With `mode: shared`, shared holders coexist, each with its own lease and fencing token, and
    an exclusive holder excludes them all. While an exclusive acquire waits for the lock on a
    server, later shared acquires on that server queue behind it (`acquired: false` without a
    wait). Renew and release work as for an exclusive lock.

    With `wait_seconds`, the request waits up to that long for the lock instead: waiters of one
    lock are served in arrival order (on each server), and the answer comes as soon as the lock
    is granted (released on any server sharing the database, or expired), or with
    `acquired: false` and a `Retry-After` header when the wait ends. A waiter whose client closes
    the connection leaves the queue at once and is never granted the lock.

    Args:
        resource (str):
        body (AcquireRequest): Acquire a lock. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcquireGranted | AcquireHeld | Problem]
     """


    kwargs = _get_kwargs(
        resource=resource,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    resource: str,
    *,
    client: AuthenticatedClient,
    body: AcquireRequest,

) -> AcquireGranted | AcquireHeld | Problem | None:
    """ Acquire a lock.

     Grants the lock when the resource is free, its lock has expired, or the caller already holds
    it (then the lease restarts from now and the fencing token is kept). When another owner holds
    a live lock the answer is still 200, with `acquired: false`: retry later.

    With `mode: shared`, shared holders coexist, each with its own lease and fencing token, and
    an exclusive holder excludes them all. While an exclusive acquire waits for the lock on a
    server, later shared acquires on that server queue behind it (`acquired: false` without a
    wait). Renew and release work as for an exclusive lock.

    With `wait_seconds`, the request waits up to that long for the lock instead: waiters of one
    lock are served in arrival order (on each server), and the answer comes as soon as the lock
    is granted (released on any server sharing the database, or expired), or with
    `acquired: false` and a `Retry-After` header when the wait ends. A waiter whose client closes
    the connection leaves the queue at once and is never granted the lock.

    Args:
        resource (str):
        body (AcquireRequest): Acquire a lock. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcquireGranted | AcquireHeld | Problem
     """


    return (await asyncio_detailed(
        resource=resource,
client=client,
body=body,

    )).parsed
