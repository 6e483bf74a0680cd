from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.fence_stale import FenceStale
from ...models.permit_fence_valid import PermitFenceValid
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    name: str,
    *,
    token: int,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["token"] = token


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/semaphores/{name}/fence".format(name=quote(str(name), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> FenceStale | PermitFenceValid | Problem | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> FenceStale | PermitFenceValid:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_permit_fence_response_type_0 = PermitFenceValid.from_dict(data)



                return componentsschemas_permit_fence_response_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_permit_fence_response_type_1 = FenceStale.from_dict(data)



            return componentsschemas_permit_fence_response_type_1

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[FenceStale | PermitFenceValid | Problem]:
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
    token: int,

) -> Response[FenceStale | PermitFenceValid | Problem]:
    """ Check a fencing token against a semaphore.

     Answers whether `token` is the fencing token of a grant of this semaphore that is live right
    now (any holder's): `valid: true` with that grant, or `valid: false` with the newest live
    grant's token (`current`, `null` when no one holds a permit). A read, as for a lock.

    Args:
        name (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[FenceStale | PermitFenceValid | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
token=token,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    name: str,
    *,
    client: AuthenticatedClient,
    token: int,

) -> FenceStale | PermitFenceValid | Problem | None:
    """ Check a fencing token against a semaphore.

     Answers whether `token` is the fencing token of a grant of this semaphore that is live right
    now (any holder's): `valid: true` with that grant, or `valid: false` with the newest live
    grant's token (`current`, `null` when no one holds a permit). A read, as for a lock.

    Args:
        name (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        FenceStale | PermitFenceValid | Problem
     """


    return sync_detailed(
        name=name,
client=client,
token=token,

    ).parsed

async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    token: int,

) -> Response[FenceStale | PermitFenceValid | Problem]:
    """ Check a fencing token against a semaphore.

     Answers whether `token` is the fencing token of a grant of this semaphore that is live right
    now (any holder's): `valid: true` with that grant, or `valid: false` with the newest live
    grant's token (`current`, `null` when no one holds a permit). A read, as for a lock.

    Args:
        name (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[FenceStale | PermitFenceValid | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
token=token,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,
    token: int,

) -> FenceStale | PermitFenceValid | Problem | None:
    """ Check a fencing token against a semaphore.

     Answers whether `token` is the fencing token of a grant of this semaphore that is live right
    now (any holder's): `valid: true` with that grant, or `valid: false` with the newest live
    grant's token (`current`, `null` when no one holds a permit). A read, as for a lock.

    Args:
        name (str):
        token (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        FenceStale | PermitFenceValid | Problem
     """


    return (await asyncio_detailed(
        name=name,
client=client,
token=token,

    )).parsed
