from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.session_open_request import SessionOpenRequest
from ...models.session_response import SessionResponse
from typing import cast



def _get_kwargs(
    *,
    body: SessionOpenRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/sessions",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SessionResponse | None:
    if response.status_code == 201:
        response_201 = SessionResponse.from_dict(response.json())



        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

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
    *,
    client: AuthenticatedClient,
    body: SessionOpenRequest,

) -> Response[Problem | SessionResponse]:
    """ Open a session.

     A session is one lease that keeps many holds alive: take locks, shared locks, permits and
    leaderships with `"session": id` in place of `owner` (or `candidate`), `ttl_seconds` and
    `lock_delay_seconds`. Each hold keeps its own fencing token and history, and ends with the
    session: when it is closed (`DELETE /sessions/{id}`, all at once), or when it runs out because
    no keepalive came in time (then each hold's place stays kept for the session's
    `lock_delay_seconds`). A keepalive costs the same whatever the session holds.

    Args:
        body (SessionOpenRequest): Open a session. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionResponse]
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
    body: SessionOpenRequest,

) -> Problem | SessionResponse | None:
    """ Open a session.

     A session is one lease that keeps many holds alive: take locks, shared locks, permits and
    leaderships with `"session": id` in place of `owner` (or `candidate`), `ttl_seconds` and
    `lock_delay_seconds`. Each hold keeps its own fencing token and history, and ends with the
    session: when it is closed (`DELETE /sessions/{id}`, all at once), or when it runs out because
    no keepalive came in time (then each hold's place stays kept for the session's
    `lock_delay_seconds`). A keepalive costs the same whatever the session holds.

    Args:
        body (SessionOpenRequest): Open a session. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionResponse
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: SessionOpenRequest,

) -> Response[Problem | SessionResponse]:
    """ Open a session.

     A session is one lease that keeps many holds alive: take locks, shared locks, permits and
    leaderships with `"session": id` in place of `owner` (or `candidate`), `ttl_seconds` and
    `lock_delay_seconds`. Each hold keeps its own fencing token and history, and ends with the
    session: when it is closed (`DELETE /sessions/{id}`, all at once), or when it runs out because
    no keepalive came in time (then each hold's place stays kept for the session's
    `lock_delay_seconds`). A keepalive costs the same whatever the session holds.

    Args:
        body (SessionOpenRequest): Open a session. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionResponse]
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
    body: SessionOpenRequest,

) -> Problem | SessionResponse | None:
    """ Open a session.

     A session is one lease that keeps many holds alive: take locks, shared locks, permits and
    leaderships with `"session": id` in place of `owner` (or `candidate`), `ttl_seconds` and
    `lock_delay_seconds`. Each hold keeps its own fencing token and history, and ends with the
    session: when it is closed (`DELETE /sessions/{id}`, all at once), or when it runs out because
    no keepalive came in time (then each hold's place stays kept for the session's
    `lock_delay_seconds`). A keepalive costs the same whatever the session holds.

    Args:
        body (SessionOpenRequest): Open a session. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionResponse
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
