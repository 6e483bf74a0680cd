from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.multi_acquire_request import MultiAcquireRequest
from ...models.multi_granted import MultiGranted
from ...models.multi_unavailable import MultiUnavailable
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    *,
    body: MultiAcquireRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/locks",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> MultiGranted | MultiUnavailable | Problem | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> MultiGranted | MultiUnavailable:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_multi_acquire_response_type_0 = MultiGranted.from_dict(data)



                return componentsschemas_multi_acquire_response_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_multi_acquire_response_type_1 = MultiUnavailable.from_dict(data)



            return componentsschemas_multi_acquire_response_type_1

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[MultiGranted | MultiUnavailable | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: MultiAcquireRequest,

) -> Response[MultiGranted | MultiUnavailable | Problem]:
    """ Acquire several locks at once.

     Grants every lock of `locks` (each `exclusive` or `shared`) in one transaction, or none:
    `acquired: true` with the locks in request order, each with its own fencing token; or
    `acquired: false` with the ones that could not be granted, and nothing changed. With
    `wait_seconds` the request waits until all of them are available together (holding none
    meanwhile, so two such requests can never deadlock), or until the wait ends (then with
    `Retry-After`). A lock the owner holds in the same mode is re-granted; one it holds in the
    other mode is unavailable.

    Args:
        body (MultiAcquireRequest): Acquire several locks together, or none. Unknown fields are
            ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[MultiGranted | MultiUnavailable | Problem]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: MultiAcquireRequest,

) -> MultiGranted | MultiUnavailable | Problem | None:
    """ Acquire several locks at once.

     Grants every lock of `locks` (each `exclusive` or `shared`) in one transaction, or none:
    `acquired: true` with the locks in request order, each with its own fencing token; or
    `acquired: false` with the ones that could not be granted, and nothing changed. With
    `wait_seconds` the request waits until all of them are available together (holding none
    meanwhile, so two such requests can never deadlock), or until the wait ends (then with
    `Retry-After`). A lock the owner holds in the same mode is re-granted; one it holds in the
    other mode is unavailable.

    Args:
        body (MultiAcquireRequest): Acquire several locks together, or none. Unknown fields are
            ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        MultiGranted | MultiUnavailable | Problem
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: MultiAcquireRequest,

) -> Response[MultiGranted | MultiUnavailable | Problem]:
    """ Acquire several locks at once.

     Grants every lock of `locks` (each `exclusive` or `shared`) in one transaction, or none:
    `acquired: true` with the locks in request order, each with its own fencing token; or
    `acquired: false` with the ones that could not be granted, and nothing changed. With
    `wait_seconds` the request waits until all of them are available together (holding none
    meanwhile, so two such requests can never deadlock), or until the wait ends (then with
    `Retry-After`). A lock the owner holds in the same mode is re-granted; one it holds in the
    other mode is unavailable.

    Args:
        body (MultiAcquireRequest): Acquire several locks together, or none. Unknown fields are
            ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[MultiGranted | MultiUnavailable | Problem]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: MultiAcquireRequest,

) -> MultiGranted | MultiUnavailable | Problem | None:
    """ Acquire several locks at once.

     Grants every lock of `locks` (each `exclusive` or `shared`) in one transaction, or none:
    `acquired: true` with the locks in request order, each with its own fencing token; or
    `acquired: false` with the ones that could not be granted, and nothing changed. With
    `wait_seconds` the request waits until all of them are available together (holding none
    meanwhile, so two such requests can never deadlock), or until the wait ends (then with
    `Retry-After`). A lock the owner holds in the same mode is re-granted; one it holds in the
    other mode is unavailable.

    Args:
        body (MultiAcquireRequest): Acquire several locks together, or none. Unknown fields are
            ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        MultiGranted | MultiUnavailable | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
