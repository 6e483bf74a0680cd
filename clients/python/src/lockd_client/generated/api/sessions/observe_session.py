from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/sessions/{id}/observe".format(id=quote(str(id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
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

) -> Response[Problem | str]:
    """ Observe a session.

     A `text/event-stream` (Server-Sent Events). The first event is the session and its live holds
    (`event: state`, as `GET /sessions/{id}` answers them); then `granted` for each hold taken
    under the session and `released` for each hold that ends while the session lives on
    (released, resigned, force-released or undone), each with the hold (`kind`, `name`,
    `fencing_token` and `mode`, `permits` or `term`); last `ended`, with the `reason` (`closed`,
    `expired` when it ran out, `force-released` when an admin ended it) and the `holds` that ended
    with it, after which the stream closes. A keepalive and a re-grant are no event. Ids, a
    reconnect with `Last-Event-ID` and the keep-alive comments are as for a lock. Changes made
    through this server arrive at once, the session running out within a few milliseconds of its
    `expires_at`, changes through other servers within about half a second. An unknown or ended
    session is 404.

    Args:
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        id=id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Observe a session.

     A `text/event-stream` (Server-Sent Events). The first event is the session and its live holds
    (`event: state`, as `GET /sessions/{id}` answers them); then `granted` for each hold taken
    under the session and `released` for each hold that ends while the session lives on
    (released, resigned, force-released or undone), each with the hold (`kind`, `name`,
    `fencing_token` and `mode`, `permits` or `term`); last `ended`, with the `reason` (`closed`,
    `expired` when it ran out, `force-released` when an admin ended it) and the `holds` that ended
    with it, after which the stream closes. A keepalive and a re-grant are no event. Ids, a
    reconnect with `Last-Event-ID` and the keep-alive comments are as for a lock. Changes made
    through this server arrive at once, the session running out within a few milliseconds of its
    `expires_at`, changes through other servers within about half a second. An unknown or ended
    session is 404.

    Args:
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        id=id,
client=client,

    ).parsed

async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | str]:
    """ Observe a session.

     A `text/event-stream` (Server-Sent Events). The first event is the session and its live holds
    (`event: state`, as `GET /sessions/{id}` answers them); then `granted` for each hold taken
    under the session and `released` for each hold that ends while the session lives on
    (released, resigned, force-released or undone), each with the hold (`kind`, `name`,
    `fencing_token` and `mode`, `permits` or `term`); last `ended`, with the `reason` (`closed`,
    `expired` when it ran out, `force-released` when an admin ended it) and the `holds` that ended
    with it, after which the stream closes. A keepalive and a re-grant are no event. Ids, a
    reconnect with `Last-Event-ID` and the keep-alive comments are as for a lock. Changes made
    through this server arrive at once, the session running out within a few milliseconds of its
    `expires_at`, changes through other servers within about half a second. An unknown or ended
    session is 404.

    Args:
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        id=id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | str | None:
    """ Observe a session.

     A `text/event-stream` (Server-Sent Events). The first event is the session and its live holds
    (`event: state`, as `GET /sessions/{id}` answers them); then `granted` for each hold taken
    under the session and `released` for each hold that ends while the session lives on
    (released, resigned, force-released or undone), each with the hold (`kind`, `name`,
    `fencing_token` and `mode`, `permits` or `term`); last `ended`, with the `reason` (`closed`,
    `expired` when it ran out, `force-released` when an admin ended it) and the `holds` that ended
    with it, after which the stream closes. A keepalive and a re-grant are no event. Ids, a
    reconnect with `Last-Event-ID` and the keep-alive comments are as for a lock. Changes made
    through this server arrive at once, the session running out within a few milliseconds of its
    `expires_at`, changes through other servers within about half a second. An unknown or ended
    session is 404.

    Args:
        id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        id=id,
client=client,

    )).parsed
