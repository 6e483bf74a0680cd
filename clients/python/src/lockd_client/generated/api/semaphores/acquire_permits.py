from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.permit_acquire_request import PermitAcquireRequest
from ...models.permit_granted import PermitGranted
from ...models.permit_unavailable import PermitUnavailable
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    name: str,
    *,
    body: PermitAcquireRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/semaphores/{name}".format(name=quote(str(name), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PermitGranted | PermitUnavailable | Problem | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> PermitGranted | PermitUnavailable:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_permit_acquire_response_type_0 = PermitGranted.from_dict(data)



                return componentsschemas_permit_acquire_response_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_permit_acquire_response_type_1 = PermitUnavailable.from_dict(data)



            return componentsschemas_permit_acquire_response_type_1

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PermitGranted | PermitUnavailable | Problem]:
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
    body: PermitAcquireRequest,

) -> Response[PermitGranted | PermitUnavailable | Problem]:
    """ Acquire permits of a semaphore.

     Grants `permits` (default 1) of semaphore `name` when that many are free out of `limit`:
    `acquired: true` with the permit and its own fencing token. When too few are free the answer
    is still 200, with `acquired: false` and how many are free. An owner holds at most one grant
    per semaphore: acquiring again with the same permits re-grants it (the lease restarts, the
    token is kept).

    With `wait_seconds`, the request waits up to that long: waiters of one semaphore are served
    in arrival order on each server, and a later waiter never overtakes an earlier one that
    needs more permits (nor does a new acquire without a wait). When the wait ends without
    permits the answer is `acquired: false` with a `Retry-After` header.

    Args:
        name (str):
        body (PermitAcquireRequest): Acquire permits of a semaphore. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PermitGranted | PermitUnavailable | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    name: str,
    *,
    client: AuthenticatedClient,
    body: PermitAcquireRequest,

) -> PermitGranted | PermitUnavailable | Problem | None:
    """ Acquire permits of a semaphore.

     Grants `permits` (default 1) of semaphore `name` when that many are free out of `limit`:
    `acquired: true` with the permit and its own fencing token. When too few are free the answer
    is still 200, with `acquired: false` and how many are free. An owner holds at most one grant
    per semaphore: acquiring again with the same permits re-grants it (the lease restarts, the
    token is kept).

    With `wait_seconds`, the request waits up to that long: waiters of one semaphore are served
    in arrival order on each server, and a later waiter never overtakes an earlier one that
    needs more permits (nor does a new acquire without a wait). When the wait ends without
    permits the answer is `acquired: false` with a `Retry-After` header.

    Args:
        name (str):
        body (PermitAcquireRequest): Acquire permits of a semaphore. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PermitGranted | PermitUnavailable | Problem
     """


    return sync_detailed(
        name=name,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    body: PermitAcquireRequest,

) -> Response[PermitGranted | PermitUnavailable | Problem]:
    """ Acquire permits of a semaphore.

     Grants `permits` (default 1) of semaphore `name` when that many are free out of `limit`:
    `acquired: true` with the permit and its own fencing token. When too few are free the answer
    is still 200, with `acquired: false` and how many are free. An owner holds at most one grant
    per semaphore: acquiring again with the same permits re-grants it (the lease restarts, the
    token is kept).

    With `wait_seconds`, the request waits up to that long: waiters of one semaphore are served
    in arrival order on each server, and a later waiter never overtakes an earlier one that
    needs more permits (nor does a new acquire without a wait). When the wait ends without
    permits the answer is `acquired: false` with a `Retry-After` header.

    Args:
        name (str):
        body (PermitAcquireRequest): Acquire permits of a semaphore. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PermitGranted | PermitUnavailable | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,
    body: PermitAcquireRequest,

) -> PermitGranted | PermitUnavailable | Problem | None:
    """ Acquire permits of a semaphore.

     Grants `permits` (default 1) of semaphore `name` when that many are free out of `limit`:
    `acquired: true` with the permit and its own fencing token. When too few are free the answer
    is still 200, with `acquired: false` and how many are free. An owner holds at most one grant
    per semaphore: acquiring again with the same permits re-grants it (the lease restarts, the
    token is kept).

    With `wait_seconds`, the request waits up to that long: waiters of one semaphore are served
    in arrival order on each server, and a later waiter never overtakes an earlier one that
    needs more permits (nor does a new acquire without a wait). When the wait ends without
    permits the answer is `acquired: false` with a `Retry-After` header.

    Args:
        name (str):
        body (PermitAcquireRequest): Acquire permits of a semaphore. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PermitGranted | PermitUnavailable | Problem
     """


    return (await asyncio_detailed(
        name=name,
client=client,
body=body,

    )).parsed
