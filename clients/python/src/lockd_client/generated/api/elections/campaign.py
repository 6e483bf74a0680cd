from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.campaign_request import CampaignRequest
from ...models.campaign_response import CampaignResponse
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    name: str,
    *,
    body: CampaignRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/elections/{name}/campaign".format(name=quote(str(name), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> CampaignResponse | Problem | None:
    if response.status_code == 200:
        response_200 = CampaignResponse.from_dict(response.json())



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

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[CampaignResponse | Problem]:
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
    body: CampaignRequest,

) -> Response[CampaignResponse | Problem]:
    """ Campaign to lead an election.

     Elects the candidate when the office is vacant (never held, resigned, or the leader's lease
    ended): its term is a new fencing token, larger than every earlier leader's. The sitting
    leader campaigning again is granted its lease anew from now, keeping its term (and its value
    unless given one). When another candidate leads, the answer is still 200, with
    `elected: false` and that leader.

    With `wait_seconds`, the campaign waits up to that long instead: waiting candidates are
    served in arrival order (on each server), and the answer comes as soon as the candidate is
    elected (the leader resigned on any server sharing the database, or its lease ended), or with
    `elected: false` and `Retry-After` when the wait ends. A candidate whose client closes the
    connection leaves the line at once and is never elected.

    Args:
        name (str):
        body (CampaignRequest): Campaign to lead an election. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CampaignResponse | Problem]
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
    body: CampaignRequest,

) -> CampaignResponse | Problem | None:
    """ Campaign to lead an election.

     Elects the candidate when the office is vacant (never held, resigned, or the leader's lease
    ended): its term is a new fencing token, larger than every earlier leader's. The sitting
    leader campaigning again is granted its lease anew from now, keeping its term (and its value
    unless given one). When another candidate leads, the answer is still 200, with
    `elected: false` and that leader.

    With `wait_seconds`, the campaign waits up to that long instead: waiting candidates are
    served in arrival order (on each server), and the answer comes as soon as the candidate is
    elected (the leader resigned on any server sharing the database, or its lease ended), or with
    `elected: false` and `Retry-After` when the wait ends. A candidate whose client closes the
    connection leaves the line at once and is never elected.

    Args:
        name (str):
        body (CampaignRequest): Campaign to lead an election. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CampaignResponse | Problem
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
    body: CampaignRequest,

) -> Response[CampaignResponse | Problem]:
    """ Campaign to lead an election.

     Elects the candidate when the office is vacant (never held, resigned, or the leader's lease
    ended): its term is a new fencing token, larger than every earlier leader's. The sitting
    leader campaigning again is granted its lease anew from now, keeping its term (and its value
    unless given one). When another candidate leads, the answer is still 200, with
    `elected: false` and that leader.

    With `wait_seconds`, the campaign waits up to that long instead: waiting candidates are
    served in arrival order (on each server), and the answer comes as soon as the candidate is
    elected (the leader resigned on any server sharing the database, or its lease ended), or with
    `elected: false` and `Retry-After` when the wait ends. A candidate whose client closes the
    connection leaves the line at once and is never elected.

    Args:
        name (str):
        body (CampaignRequest): Campaign to lead an election. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CampaignResponse | Problem]
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
    body: CampaignRequest,

) -> CampaignResponse | Problem | None:
    """ Campaign to lead an election.

     Elects the candidate when the office is vacant (never held, resigned, or the leader's lease
    ended): its term is a new fencing token, larger than every earlier leader's. The sitting
    leader campaigning again is granted its lease anew from now, keeping its term (and its value
    unless given one). When another candidate leads, the answer is still 200, with
    `elected: false` and that leader.

    With `wait_seconds`, the campaign waits up to that long instead: waiting candidates are
    served in arrival order (on each server), and the answer comes as soon as the candidate is
    elected (the leader resigned on any server sharing the database, or its lease ended), or with
    `elected: false` and `Retry-After` when the wait ends. A candidate whose client closes the
    connection leaves the line at once and is never elected.

    Args:
        name (str):
        body (CampaignRequest): Campaign to lead an election. Unknown fields are ignored.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CampaignResponse | Problem
     """


    return (await asyncio_detailed(
        name=name,
client=client,
body=body,

    )).parsed
