from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.permit_renew_request import PermitRenewRequest
from ...models.permit_view import PermitView
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    name: str,
    *,
    body: PermitRenewRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/semaphores/{name}/renew".format(name=quote(str(name), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PermitView | Problem | None:
    if response.status_code == 200:
        response_200 = PermitView.from_dict(response.json())



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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PermitView | Problem]:
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
    body: PermitRenewRequest,

) -> Response[PermitView | Problem]:
    """ Renew permits.

     Extends the caller's live grant to now + `ttl_seconds`, keeping its permits, `acquired_at`
    and fencing token; a `value` replaces the stored one, no `value` keeps it. An expired grant
    belongs to nobody: acquire again instead.

    Args:
        name (str):
        body (PermitRenewRequest): Renew a grant of permits you hold. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PermitView | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    name: str,
    *,
    client: AuthenticatedClient,
    body: PermitRenewRequest,

) -> PermitView | Problem | None:
    """ Renew permits.

     Extends the caller's live grant to now + `ttl_seconds`, keeping its permits, `acquired_at`
    and fencing token; a `value` replaces the stored one, no `value` keeps it. An expired grant
    belongs to nobody: acquire again instead.

    Args:
        name (str):
        body (PermitRenewRequest): Renew a grant of permits you hold. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PermitView | Problem
     """


    return sync_detailed(
        name=name,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    body: PermitRenewRequest,

) -> Response[PermitView | Problem]:
    """ Renew permits.

     Extends the caller's live grant to now + `ttl_seconds`, keeping its permits, `acquired_at`
    and fencing token; a `value` replaces the stored one, no `value` keeps it. An expired grant
    belongs to nobody: acquire again instead.

    Args:
        name (str):
        body (PermitRenewRequest): Renew a grant of permits you hold. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PermitView | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,
    body: PermitRenewRequest,

) -> PermitView | Problem | None:
    """ Renew permits.

     Extends the caller's live grant to now + `ttl_seconds`, keeping its permits, `acquired_at`
    and fencing token; a `value` replaces the stored one, no `value` keeps it. An expired grant
    belongs to nobody: acquire again instead.

    Args:
        name (str):
        body (PermitRenewRequest): Renew a grant of permits you hold. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PermitView | Problem
     """


    return (await asyncio_detailed(
        name=name,
client=client,
body=body,

    )).parsed
