from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.session_keep_alive_request import SessionKeepAliveRequest
from ...models.session_response import SessionResponse
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    id: str,
    *,
    body: SessionKeepAliveRequest | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/sessions/{id}/keepalive".format(id=quote(str(id), safe=""),),
    }

    
    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SessionResponse | None:
    if response.status_code == 200:
        response_200 = SessionResponse.from_dict(response.json())



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

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SessionResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: SessionKeepAliveRequest | Unset = UNSET,

) -> Response[Problem | SessionResponse]:
    """ Keep a session alive.

     Moves the session's end, and so every hold's, to now plus its TTL; with `ttl_seconds`, the
    session takes that TTL from now on. An ended session (closed, forced or run out) is never
    revived: 404. The body may be empty.

    Args:
        id (str):
        body (SessionKeepAliveRequest | Unset): Keep a session alive (the body may be empty).
            Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionResponse]
     """


    kwargs = _get_kwargs(
        id=id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    id: str,
    *,
    client: AuthenticatedClient,
    body: SessionKeepAliveRequest | Unset = UNSET,

) -> Problem | SessionResponse | None:
    """ Keep a session alive.

     Moves the session's end, and so every hold's, to now plus its TTL; with `ttl_seconds`, the
    session takes that TTL from now on. An ended session (closed, forced or run out) is never
    revived: 404. The body may be empty.

    Args:
        id (str):
        body (SessionKeepAliveRequest | Unset): Keep a session alive (the body may be empty).
            Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionResponse
     """


    return sync_detailed(
        id=id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: SessionKeepAliveRequest | Unset = UNSET,

) -> Response[Problem | SessionResponse]:
    """ Keep a session alive.

     Moves the session's end, and so every hold's, to now plus its TTL; with `ttl_seconds`, the
    session takes that TTL from now on. An ended session (closed, forced or run out) is never
    revived: 404. The body may be empty.

    Args:
        id (str):
        body (SessionKeepAliveRequest | Unset): Keep a session alive (the body may be empty).
            Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionResponse]
     """


    kwargs = _get_kwargs(
        id=id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,
    body: SessionKeepAliveRequest | Unset = UNSET,

) -> Problem | SessionResponse | None:
    """ Keep a session alive.

     Moves the session's end, and so every hold's, to now plus its TTL; with `ttl_seconds`, the
    session takes that TTL from now on. An ended session (closed, forced or run out) is never
    revived: 404. The body may be empty.

    Args:
        id (str):
        body (SessionKeepAliveRequest | Unset): Keep a session alive (the body may be empty).
            Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionResponse
     """


    return (await asyncio_detailed(
        id=id,
client=client,
body=body,

    )).parsed
