from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors




def _get_kwargs(
    
) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/metrics",
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,

) -> Response[str]:
    """ Prometheus metrics.

     Counters and gauges of this process in the Prometheus text exposition format 0.0.4: requests
    by route pattern, method and status (`lockd_http_requests_total`), request latency
    (`lockd_http_request_duration_seconds`), acquires by outcome, releases and renewals by
    result, live waiters, database pool connections, and the number of live locks (counted in
    the background every few seconds; `lockd_live_locks_age_seconds` says how long ago). Like
    `/healthz` it needs no API key: it carries no resource names, owners, tenants or keys.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[str]
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

) -> str | None:
    """ Prometheus metrics.

     Counters and gauges of this process in the Prometheus text exposition format 0.0.4: requests
    by route pattern, method and status (`lockd_http_requests_total`), request latency
    (`lockd_http_request_duration_seconds`), acquires by outcome, releases and renewals by
    result, live waiters, database pool connections, and the number of live locks (counted in
    the background every few seconds; `lockd_live_locks_age_seconds` says how long ago). Like
    `/healthz` it needs no API key: it carries no resource names, owners, tenants or keys.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        str
     """


    return sync_detailed(
        client=client,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,

) -> Response[str]:
    """ Prometheus metrics.

     Counters and gauges of this process in the Prometheus text exposition format 0.0.4: requests
    by route pattern, method and status (`lockd_http_requests_total`), request latency
    (`lockd_http_request_duration_seconds`), acquires by outcome, releases and renewals by
    result, live waiters, database pool connections, and the number of live locks (counted in
    the background every few seconds; `lockd_live_locks_age_seconds` says how long ago). Like
    `/healthz` it needs no API key: it carries no resource names, owners, tenants or keys.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[str]
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

) -> str | None:
    """ Prometheus metrics.

     Counters and gauges of this process in the Prometheus text exposition format 0.0.4: requests
    by route pattern, method and status (`lockd_http_requests_total`), request latency
    (`lockd_http_request_duration_seconds`), acquires by outcome, releases and renewals by
    result, live waiters, database pool connections, and the number of live locks (counted in
    the background every few seconds; `lockd_live_locks_age_seconds` says how long ago). Like
    `/healthz` it needs no API key: it carries no resource names, owners, tenants or keys.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        str
     """


    return (await asyncio_detailed(
        client=client,

    )).parsed
