from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.end_session_force import EndSessionForce
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    id: str,
    *,
    force: EndSessionForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_force: str | Unset = UNSET
    if not isinstance(force, Unset):
        json_force = force.value

    params["force"] = json_force

    params["reason"] = reason


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/sessions/{id}".format(id=quote(str(id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
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
    force: EndSessionForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ End a session.

     Ends the session and releases every hold under it in one transaction: any reader sees all of
    its holds or none. Waiters of the freed places are served as after a release. An admin key
    may end any session of its tenant with `?force=true&reason=` (each hold is recorded
    force-released with the reason).

    Args:
        id (str):
        force (EndSessionForce | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
force=force,
reason=reason,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    id: str,
    *,
    client: AuthenticatedClient,
    force: EndSessionForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Any | Problem | None:
    """ End a session.

     Ends the session and releases every hold under it in one transaction: any reader sees all of
    its holds or none. Waiters of the freed places are served as after a release. An admin key
    may end any session of its tenant with `?force=true&reason=` (each hold is recorded
    force-released with the reason).

    Args:
        id (str):
        force (EndSessionForce | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return sync_detailed(
        id=id,
client=client,
force=force,
reason=reason,

    ).parsed

async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    force: EndSessionForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ End a session.

     Ends the session and releases every hold under it in one transaction: any reader sees all of
    its holds or none. Waiters of the freed places are served as after a release. An admin key
    may end any session of its tenant with `?force=true&reason=` (each hold is recorded
    force-released with the reason).

    Args:
        id (str):
        force (EndSessionForce | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
force=force,
reason=reason,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,
    force: EndSessionForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Any | Problem | None:
    """ End a session.

     Ends the session and releases every hold under it in one transaction: any reader sees all of
    its holds or none. Waiters of the freed places are served as after a release. An admin key
    may end any session of its tenant with `?force=true&reason=` (each hold is recorded
    force-released with the reason).

    Args:
        id (str):
        force (EndSessionForce | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return (await asyncio_detailed(
        id=id,
client=client,
force=force,
reason=reason,

    )).parsed
