from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.election_fence_valid import ElectionFenceValid
from ...models.fence_stale import FenceStale
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    name: str,
    *,
    term: int,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["term"] = term


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/elections/{name}/fence".format(name=quote(str(name), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ElectionFenceValid | FenceStale | Problem | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> ElectionFenceValid | FenceStale:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_election_fence_response_type_0 = ElectionFenceValid.from_dict(data)



                return componentsschemas_election_fence_response_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_election_fence_response_type_1 = FenceStale.from_dict(data)



            return componentsschemas_election_fence_response_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ElectionFenceValid | FenceStale | Problem]:
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
    term: int,

) -> Response[ElectionFenceValid | FenceStale | Problem]:
    """ Check a term against an election.

     Answers whether `term` is the term of the leader in office right now: `valid: true` with that
    leader, or `valid: false` with the sitting leader's term (`current`, `null` when the office is
    vacant). A read, as for a lock: a leader that paused past its lease and wakes up believing it
    still leads is refused here.

    Args:
        name (str):
        term (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ElectionFenceValid | FenceStale | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
term=term,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    name: str,
    *,
    client: AuthenticatedClient,
    term: int,

) -> ElectionFenceValid | FenceStale | Problem | None:
    """ Check a term against an election.

     Answers whether `term` is the term of the leader in office right now: `valid: true` with that
    leader, or `valid: false` with the sitting leader's term (`current`, `null` when the office is
    vacant). A read, as for a lock: a leader that paused past its lease and wakes up believing it
    still leads is refused here.

    Args:
        name (str):
        term (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ElectionFenceValid | FenceStale | Problem
     """


    return sync_detailed(
        name=name,
client=client,
term=term,

    ).parsed

async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient,
    term: int,

) -> Response[ElectionFenceValid | FenceStale | Problem]:
    """ Check a term against an election.

     Answers whether `term` is the term of the leader in office right now: `valid: true` with that
    leader, or `valid: false` with the sitting leader's term (`current`, `null` when the office is
    vacant). A read, as for a lock: a leader that paused past its lease and wakes up believing it
    still leads is refused here.

    Args:
        name (str):
        term (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ElectionFenceValid | FenceStale | Problem]
     """


    kwargs = _get_kwargs(
        name=name,
term=term,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient,
    term: int,

) -> ElectionFenceValid | FenceStale | Problem | None:
    """ Check a term against an election.

     Answers whether `term` is the term of the leader in office right now: `valid: true` with that
    leader, or `valid: false` with the sitting leader's term (`current`, `null` when the office is
    vacant). A read, as for a lock: a leader that paused past its lease and wakes up believing it
    still leads is refused here.

    Args:
        name (str):
        term (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ElectionFenceValid | FenceStale | Problem
     """


    return (await asyncio_detailed(
        name=name,
client=client,
term=term,

    )).parsed
