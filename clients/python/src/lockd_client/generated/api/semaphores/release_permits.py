from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.force_released_response import ForceReleasedResponse
from ...models.problem import Problem
from ...models.release_permits_force import ReleasePermitsForce
from ...models.release_request import ReleaseRequest
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    name: str,
    *,
    body: ReleaseRequest | Unset = UNSET,
    owner: str | Unset = UNSET,
    session: str | Unset = UNSET,
    force: ReleasePermitsForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    params: dict[str, Any] = {}

    params["owner"] = owner

    params["session"] = session

    json_force: str | Unset = UNSET
    if not isinstance(force, Unset):
        json_force = force.value

    params["force"] = json_force

    params["reason"] = reason


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/semaphores/{name}".format(name=quote(str(name), safe=""),),
        "params": params,
    }

    
    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | ForceReleasedResponse | Problem | None:
    if response.status_code == 200:
        response_200 = ForceReleasedResponse.from_dict(response.json())



        return response_200

    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | ForceReleasedResponse | Problem]:
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
    body: ReleaseRequest | Unset = UNSET,
    owner: str | Unset = UNSET,
    session: str | Unset = UNSET,
    force: ReleasePermitsForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Response[Any | ForceReleasedResponse | Problem]:
    """ Release permits.

     Ends the caller's live grant on the semaphore. The owner comes from the JSON body or, when
    there is no body, from the `owner` query parameter (if both are given they must agree).
    Other holders are no conflict: a caller without a live grant gets 404.

    Args:
        name (str):
        owner (str | Unset):
        session (str | Unset):
        force (ReleasePermitsForce | Unset):
        reason (str | Unset):
        body (ReleaseRequest | Unset): Release a lock you hold. The owner may instead be given as
            `?owner=` without a body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ForceReleasedResponse | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
body=body,
owner=owner,
session=session,
force=force,
reason=reason,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    name: str,
    *,
    client: AuthenticatedClient,
    body: ReleaseRequest | Unset = UNSET,
    owner: str | Unset = UNSET,
    session: str | Unset = UNSET,
    force: ReleasePermitsForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Any | ForceReleasedResponse | Problem | None:
    """ Release permits.

     Ends the caller's live grant on the semaphore. The owner comes from the JSON body or, when
    there is no body, from the `owner` query parameter (if both are given they must agree).
    Other holders are no conflict: a caller without a live grant gets 404.

    Args:
        name (str):
        owner (str | Unset):
        session (str | Unset):
        force (ReleasePermitsForce | Unset):
        reason (str | Unset):
        body (ReleaseRequest | Unset): Release a lock you hold. The owner may instead be given as
            `?owner=` without a body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ForceReleasedResponse | Problem
     """


    return sync_detailed(
        name=name,
client=client,
body=body,
owner=owner,
session=session,
force=force,
reason=reason,

    ).parsed

async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    body: ReleaseRequest | Unset = UNSET,
    owner: str | Unset = UNSET,
    session: str | Unset = UNSET,
    force: ReleasePermitsForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Response[Any | ForceReleasedResponse | Problem]:
    """ Release permits.

     Ends the caller's live grant on the semaphore. The owner comes from the JSON body or, when
    there is no body, from the `owner` query parameter (if both are given they must agree).
    Other holders are no conflict: a caller without a live grant gets 404.

    Args:
        name (str):
        owner (str | Unset):
        session (str | Unset):
        force (ReleasePermitsForce | Unset):
        reason (str | Unset):
        body (ReleaseRequest | Unset): Release a lock you hold. The owner may instead be given as
            `?owner=` without a body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ForceReleasedResponse | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
body=body,
owner=owner,
session=session,
force=force,
reason=reason,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,
    body: ReleaseRequest | Unset = UNSET,
    owner: str | Unset = UNSET,
    session: str | Unset = UNSET,
    force: ReleasePermitsForce | Unset = UNSET,
    reason: str | Unset = UNSET,

) -> Any | ForceReleasedResponse | Problem | None:
    """ Release permits.

     Ends the caller's live grant on the semaphore. The owner comes from the JSON body or, when
    there is no body, from the `owner` query parameter (if both are given they must agree).
    Other holders are no conflict: a caller without a live grant gets 404.

    Args:
        name (str):
        owner (str | Unset):
        session (str | Unset):
        force (ReleasePermitsForce | Unset):
        reason (str | Unset):
        body (ReleaseRequest | Unset): Release a lock you hold. The owner may instead be given as
            `?owner=` without a body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ForceReleasedResponse | Problem
     """


    return (await asyncio_detailed(
        name=name,
client=client,
body=body,
owner=owner,
session=session,
force=force,
reason=reason,

    )).parsed
