from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.health_status import HealthStatus
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    
) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/readyz",
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> HealthStatus | Problem | None:
    if response.status_code == 200:
        response_200 = HealthStatus.from_dict(response.json())



        return response_200

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[HealthStatus | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,

) -> Response[HealthStatus | Problem]:
    """ Readiness: 200 when the lock database answers, else 503.

     Send lock traffic to this instance only while this passes. A 503 is a database problem
    (unreachable, out of connections): restarting lockd does not fix it. Open even when API keys
    are configured.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HealthStatus | Problem]
     """


    kwargs = _get_kwargs(
        
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,

) -> HealthStatus | Problem | None:
    """ Readiness: 200 when the lock database answers, else 503.

     Send lock traffic to this instance only while this passes. A 503 is a database problem
    (unreachable, out of connections): restarting lockd does not fix it. Open even when API keys
    are configured.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HealthStatus | Problem
     """


    return sync_detailed(
        client=client,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,

) -> Response[HealthStatus | Problem]:
    """ Readiness: 200 when the lock database answers, else 503.

     Send lock traffic to this instance only while this passes. A 503 is a database problem
    (unreachable, out of connections): restarting lockd does not fix it. Open even when API keys
    are configured.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HealthStatus | Problem]
     """


    kwargs = _get_kwargs(
        
    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,

) -> HealthStatus | Problem | None:
    """ Readiness: 200 when the lock database answers, else 503.

     Send lock traffic to this instance only while this passes. A 503 is a database problem
    (unreachable, out of connections): restarting lockd does not fix it. Open even when API keys
    are configured.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HealthStatus | Problem
     """


    return (await asyncio_detailed(
        client=client,

    )).parsed
