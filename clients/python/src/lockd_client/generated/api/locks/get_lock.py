from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.lock_view import LockView
from ...models.problem import Problem
from ...models.shared_hold import SharedHold
from typing import cast



def _get_kwargs(
    resource: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/locks/{resource}".format(resource=quote(str(resource), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> LockView | SharedHold | Problem | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> LockView | SharedHold:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_lock_status_type_0 = LockView.from_dict(data)



                return componentsschemas_lock_status_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_lock_status_type_1 = SharedHold.from_dict(data)



            return componentsschemas_lock_status_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[LockView | SharedHold | Problem]:
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

) -> Response[LockView | SharedHold | Problem]:
    """ Get a lock's status.

     Returns how the resource is held: the live lock of its exclusive holder, or every live
    shared holder. A lock whose leases have all ended is gone: 404.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LockView | SharedHold | Problem]
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

) -> LockView | SharedHold | Problem | None:
    """ Get a lock's status.

     Returns how the resource is held: the live lock of its exclusive holder, or every live
    shared holder. A lock whose leases have all ended is gone: 404.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LockView | SharedHold | Problem
     """


    return sync_detailed(
        resource=resource,
client=client,

    ).parsed

async def asyncio_detailed(
    resource: str,
    *,
    client: AuthenticatedClient,

) -> Response[LockView | SharedHold | Problem]:
    """ Get a lock's status.

     Returns how the resource is held: the live lock of its exclusive holder, or every live
    shared holder. A lock whose leases have all ended is gone: 404.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[LockView | SharedHold | Problem]
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

) -> LockView | SharedHold | Problem | None:
    """ Get a lock's status.

     Returns how the resource is held: the live lock of its exclusive holder, or every live
    shared holder. A lock whose leases have all ended is gone: 404.

    Args:
        resource (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        LockView | SharedHold | Problem
     """


    return (await asyncio_detailed(
        resource=resource,
client=client,

    )).parsed
