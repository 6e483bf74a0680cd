from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.fence_stale import FenceStale
from ...models.lock_fence_valid import LockFenceValid
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    resource: str,
    *,
    token: int,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["token"] = token


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/locks/{resource}/fence".format(resource=quote(str(resource), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> FenceStale | LockFenceValid | Problem | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> FenceStale | LockFenceValid:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_lock_fence_response_type_0 = LockFenceValid.from_dict(data)



                return componentsschemas_lock_fence_response_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_lock_fence_response_type_1 = FenceStale.from_dict(data)



            return componentsschemas_lock_fence_response_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[FenceStale | LockFenceValid | Problem]:
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
    token: int,

) -> Response[FenceStale | LockFenceValid | Problem]:
    """ Check a fencing token against a lock.

     Answers whether `token` is the fencing token of a lease on this lock that is live right now
    (for a shared lock, any live holder's): `valid: true` with that holder's lock, or
    `valid: false` with the newest live holder's token (`current`, `null` when no one holds the
    lock). A read: it changes nothing, and is cheap enough to call before every write that the
    token protects. The answer is true when it is read; a lease can end right after it
    (docs/fencing.md says what a check followed by a write can promise).

    Args:
        resource (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[FenceStale | LockFenceValid | Problem]
     """


    kwargs = _get_kwargs(
        resource=resource,
token=token,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    resource: str,
    *,
    client: AuthenticatedClient,
    token: int,

) -> FenceStale | LockFenceValid | Problem | None:
    """ Check a fencing token against a lock.

     Answers whether `token` is the fencing token of a lease on this lock that is live right now
    (for a shared lock, any live holder's): `valid: true` with that holder's lock, or
    `valid: false` with the newest live holder's token (`current`, `null` when no one holds the
    lock). A read: it changes nothing, and is cheap enough to call before every write that the
    token protects. The answer is true when it is read; a lease can end right after it
    (docs/fencing.md says what a check followed by a write can promise).

    Args:
        resource (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        FenceStale | LockFenceValid | Problem
     """


    return sync_detailed(
        resource=resource,
client=client,
token=token,

    ).parsed

async def asyncio_detailed(
    resource: str,
    *,
    client: AuthenticatedClient,
    token: int,

) -> Response[FenceStale | LockFenceValid | Problem]:
    """ Check a fencing token against a lock.

     Answers whether `token` is the fencing token of a lease on this lock that is live right now
    (for a shared lock, any live holder's): `valid: true` with that holder's lock, or
    `valid: false` with the newest live holder's token (`current`, `null` when no one holds the
    lock). A read: it changes nothing, and is cheap enough to call before every write that the
    token protects. The answer is true when it is read; a lease can end right after it
    (docs/fencing.md says what a check followed by a write can promise).

    Args:
        resource (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[FenceStale | LockFenceValid | Problem]
     """


    kwargs = _get_kwargs(
        resource=resource,
token=token,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    resource: str,
    *,
    client: AuthenticatedClient,
    token: int,

) -> FenceStale | LockFenceValid | Problem | None:
    """ Check a fencing token against a lock.

     Answers whether `token` is the fencing token of a lease on this lock that is live right now
    (for a shared lock, any live holder's): `valid: true` with that holder's lock, or
    `valid: false` with the newest live holder's token (`current`, `null` when no one holds the
    lock). A read: it changes nothing, and is cheap enough to call before every write that the
    token protects. The answer is true when it is read; a lease can end right after it
    (docs/fencing.md says what a check followed by a write can promise).

    Args:
        resource (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        FenceStale | LockFenceValid | Problem
     """


    return (await asyncio_detailed(
        resource=resource,
client=client,
token=token,

    )).parsed
