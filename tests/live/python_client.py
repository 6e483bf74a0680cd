"""The Python client generated from openapi/openapi.json, used against a live lockd.

Run by tests/live/python-client (which makes the virtualenv and generates the package
`lockd_client` with openapi-python-client). Every answer must parse into the generated model of
its status code: a 200 into AcquireGranted / AcquireHeld / LockView, a shared hold into SharedHold
(the other member of GET's oneOf), a set of locks into MultiGranted / MultiUnavailable and
ReleaseManyResponse, a listing into LockList, a fence check into LockFenceValid /
PermitFenceValid / FenceStale (with `current` an integer or None), or, for semaphores,
PermitGranted / PermitUnavailable / SemaphoreView / PermitView / SemaphoreList; a problem into
Problem.
Prints "python-client: N passed, M failed" and exits non-zero on any failure.
"""

import datetime
import sys

from lockd_client import AuthenticatedClient, Client
from lockd_client.api.locks import (
    acquire_lock,
    acquire_locks,
    check_lock_fence,
    get_lock,
    list_locks,
    release_lock,
    release_locks,
    renew_lock,
)
from lockd_client.api.operations import healthz, readyz
from lockd_client.api.semaphores import (
    acquire_permits,
    check_semaphore_fence,
    get_semaphore,
    list_semaphores,
    release_permits,
    renew_permits,
)
from lockd_client.models import (
    AcquireGranted,
    AcquireHeld,
    AcquireRequest,
    AcquireRequestMode,
    FenceStale,
    FieldError,
    HealthStatus,
    LockFenceValid,
    LockList,
    LockView,
    Mode,
    MultiAcquireRequest,
    MultiAcquireRequestLocksItem,
    MultiAcquireRequestLocksItemMode,
    MultiGranted,
    MultiUnavailable,
    PermitAcquireRequest,
    PermitFenceValid,
    PermitGranted,
    PermitRenewRequest,
    PermitUnavailable,
    PermitView,
    Problem,
    ReleaseManyRequest,
    ReleaseManyResponse,
    ReleaseRequest,
    RenewRequest,
    SemaphoreList,
    SemaphoreView,
    SharedHold,
)
from lockd_client.types import UNSET

from lockd_process import LockdProcess

KEY = "python-client-test-key"
# A name that needs percent-encoding in the path: the client must send it as one segment.
RESOURCE = "report:nightly/eu west"

passed = 0
failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def problem(response, status, slug):
    """The answer is a Problem of this status whose type ends in this slug."""
    parsed = response.parsed
    return (
        response.status_code == status
        and isinstance(parsed, Problem)
        and parsed.status == status
        and parsed.type_.endswith("/" + slug)
        and response.headers["content-type"].startswith("application/problem+json")
    )


def scenario(base):
    client = AuthenticatedClient(base_url=base, token=KEY, raise_on_unexpected_status=True)

    health = healthz.sync_detailed(client=client)
    check("healthz parses into HealthStatus", isinstance(health.parsed, HealthStatus)
          and health.parsed.status == "ok", health)
    ready = readyz.sync_detailed(client=client)
    check("readyz parses into HealthStatus", isinstance(ready.parsed, HealthStatus)
          and ready.parsed.status == "ready", ready)

    granted = acquire_lock.sync_detailed(
        RESOURCE, client=client, body=AcquireRequest(owner="worker-7", ttl_seconds=30))
    lock = granted.parsed.lock if isinstance(granted.parsed, AcquireGranted) else None
    check("acquire parses into AcquireGranted", granted.status_code == 200 and lock is not None
          and granted.parsed.acquired is True and lock.resource == RESOURCE
          and lock.owner == "worker-7" and lock.fencing_token >= 1
          and lock.expires_at - lock.acquired_at == datetime.timedelta(seconds=30), granted)
    if lock is None:
        return

    held = acquire_lock.sync_detailed(
        RESOURCE, client=client, body=AcquireRequest(owner="worker-8", ttl_seconds=30))
    check("contended acquire parses into AcquireHeld", held.status_code == 200
          and isinstance(held.parsed, AcquireHeld) and held.parsed.acquired is False
          and held.parsed.resource == RESOURCE, held)

    status = get_lock.sync_detailed(RESOURCE, client=client)
    check("status parses into LockView", isinstance(status.parsed, LockView)
          and status.parsed.owner == "worker-7"
          and status.parsed.fencing_token == lock.fencing_token, status)

    renewed = renew_lock.sync_detailed(
        RESOURCE, client=client, body=RenewRequest(owner="worker-7", ttl_seconds=60))
    check("renew parses into LockView with the token kept and a later expiry",
          isinstance(renewed.parsed, LockView)
          and renewed.parsed.fencing_token == lock.fencing_token
          and renewed.parsed.expires_at > lock.expires_at, renewed)

    forbidden = release_lock.sync_detailed(
        RESOURCE, client=client, body=ReleaseRequest(owner="worker-8"))
    check("release by another owner is a 403 Problem", problem(forbidden, 403, "forbidden"),
          forbidden)

    invalid = acquire_lock.sync_detailed(
        RESOURCE, client=client, body=AcquireRequest(owner="worker-7", ttl_seconds=0))
    errors = invalid.parsed.errors if isinstance(invalid.parsed, Problem) else None
    check("ttl_seconds 0 is a 422 Problem with a FieldError",
          problem(invalid, 422, "validation-failed")
          and isinstance(errors, list) and len(errors) == 1
          and isinstance(errors[0], FieldError)
          and (errors[0].field, errors[0].code) == ("ttl_seconds", "out_of_range"), invalid)

    anonymous = Client(base_url=base, raise_on_unexpected_status=True)
    unauthorized = get_lock.sync_detailed(RESOURCE, client=anonymous)
    check("a request without the key is a 401 Problem",
          problem(unauthorized, 401, "unauthorized")
          and unauthorized.headers.get("www-authenticate", "").startswith("Bearer"), unauthorized)

    released = release_lock.sync_detailed(RESOURCE, client=client, owner="worker-7")
    check("release by the holder (?owner=) is a 204", released.status_code == 204, released)

    gone = get_lock.sync_detailed(RESOURCE, client=client)
    check("status after release is a 404 Problem", problem(gone, 404, "not-found"), gone)

    again = acquire_lock.sync_detailed(
        RESOURCE, client=client, body=AcquireRequest(owner="worker-8", ttl_seconds=5))
    check("a new grant has a larger fencing token", isinstance(again.parsed, AcquireGranted)
          and again.parsed.lock.fencing_token > lock.fencing_token, again)


def semaphores(base):
    client = AuthenticatedClient(base_url=base, token=KEY, raise_on_unexpected_status=True)
    name = "exports/eu west"
    value = {"batch": 12, "parts": ["a", "b"]}
    granted = acquire_permits.sync_detailed(name, client=client, body=PermitAcquireRequest(
        owner="exporter-1", ttl_seconds=30, limit=3, permits=2, value=value))
    permit = granted.parsed.permit if isinstance(granted.parsed, PermitGranted) else None
    check("acquirePermits parses into PermitGranted", permit is not None
          and permit.name == name and permit.permits == 2 and permit.limit == 3
          and permit.value == value and permit.fencing_token >= 1
          and permit.expires_at - permit.acquired_at == datetime.timedelta(seconds=30), granted)
    if permit is None:
        return
    unavailable = acquire_permits.sync_detailed(name, client=client, body=PermitAcquireRequest(
        owner="exporter-2", ttl_seconds=30, limit=3, permits=2))
    check("too few permits parses into PermitUnavailable",
          isinstance(unavailable.parsed, PermitUnavailable)
          and unavailable.parsed.acquired is False and unavailable.parsed.available == 1,
          unavailable)
    mismatch = acquire_permits.sync_detailed(name, client=client, body=PermitAcquireRequest(
        owner="exporter-3", ttl_seconds=30, limit=5))
    check("another limit is a 409 Problem with the current limit",
          problem(mismatch, 409, "limit-mismatch") and mismatch.parsed.limit == 3, mismatch)
    state = get_semaphore.sync_detailed(name, client=client)
    check("getSemaphore parses into SemaphoreView", isinstance(state.parsed, SemaphoreView)
          and state.parsed.in_use == 2 and state.parsed.available == 1
          and [h.owner for h in state.parsed.holders] == ["exporter-1"], state)
    renewed = renew_permits.sync_detailed(name, client=client, body=PermitRenewRequest(
        owner="exporter-1", ttl_seconds=60, value=[1, 2]))
    check("renewPermits parses into PermitView with the value replaced",
          isinstance(renewed.parsed, PermitView) and renewed.parsed.value == [1, 2]
          and renewed.parsed.fencing_token == permit.fencing_token, renewed)
    listed = list_semaphores.sync_detailed(client=client, prefix="exports/")
    check("listSemaphores parses into SemaphoreList", isinstance(listed.parsed, SemaphoreList)
          and [s.name for s in listed.parsed.semaphores] == [name], listed)
    released = release_permits.sync_detailed(name, client=client, owner="exporter-1")
    check("releasePermits by the holder is a 204", released.status_code == 204, released)
    gone = release_permits.sync_detailed(name, client=client, body=ReleaseRequest(owner="exporter-1"))
    check("a second release is a 404 Problem", problem(gone, 404, "not-found"), gone)


def shared_locks(base):
    client = AuthenticatedClient(base_url=base, token=KEY, raise_on_unexpected_status=True)
    name = "report:monthly/eu west"
    shared = AcquireRequestMode.SHARED

    def acquire(owner, mode):
        return acquire_lock.sync_detailed(
            name, client=client, body=AcquireRequest(owner=owner, ttl_seconds=30, mode=mode))

    first = acquire("reader-1", shared)
    second = acquire("reader-2", shared)
    readers = [r.parsed.lock for r in (first, second) if isinstance(r.parsed, AcquireGranted)]
    check("two shared acquires parse into AcquireGranted, mode shared, tokens rising",
          len(readers) == 2 and all(lock.mode == Mode.SHARED for lock in readers)
          and readers[0].fencing_token < readers[1].fencing_token, (first, second))
    if len(readers) < 2:
        return

    hold = get_lock.sync_detailed(name, client=client)
    check("getLock of a shared hold parses into SharedHold (oneOf) with both readers",
          isinstance(hold.parsed, SharedHold) and hold.parsed.mode == Mode.SHARED
          and hold.parsed.resource == name
          and all(isinstance(h, LockView) for h in hold.parsed.holders)
          and [(h.owner, h.fencing_token) for h in hold.parsed.holders]
          == [(lock.owner, lock.fencing_token) for lock in readers], hold)

    upgrade = acquire("reader-1", AcquireRequestMode.EXCLUSIVE)
    check("an exclusive acquire by a reader is a 409 mode-mismatch Problem",
          problem(upgrade, 409, "mode-mismatch"), upgrade)
    writer = acquire("writer", UNSET)
    check("an acquire without mode, while readers hold, parses into AcquireHeld",
          isinstance(writer.parsed, AcquireHeld) and writer.parsed.acquired is False, writer)

    bad = AcquireRequest(owner="reader-3", ttl_seconds=30, mode=UNSET)
    bad.additional_properties["mode"] = "read"
    invalid = acquire_lock.sync_detailed(name, client=client, body=bad)
    errors = invalid.parsed.errors if isinstance(invalid.parsed, Problem) else None
    check("mode \"read\" is a 422 Problem with a FieldError on mode",
          problem(invalid, 422, "validation-failed") and isinstance(errors, list)
          and [(e.field, e.code) for e in errors] == [("mode", "invalid_value")], invalid)

    renewed = renew_lock.sync_detailed(
        name, client=client, body=RenewRequest(owner="reader-2", ttl_seconds=60))
    check("renew by a reader parses into LockView, mode shared, token kept",
          isinstance(renewed.parsed, LockView) and renewed.parsed.mode == Mode.SHARED
          and renewed.parsed.fencing_token == readers[1].fencing_token, renewed)
    for reader in readers:
        released = release_lock.sync_detailed(name, client=client, owner=reader.owner)
        check(f"release by {reader.owner} is a 204", released.status_code == 204, released)

    exclusive = acquire("writer", UNSET)
    lock = exclusive.parsed.lock if isinstance(exclusive.parsed, AcquireGranted) else None
    check("the writer is granted once the readers are gone, mode exclusive",
          lock is not None and lock.mode == Mode.EXCLUSIVE
          and lock.fencing_token > readers[1].fencing_token, exclusive)
    status = get_lock.sync_detailed(name, client=client)
    check("getLock of an exclusive hold parses into LockView (oneOf)",
          isinstance(status.parsed, LockView) and status.parsed.mode == Mode.EXCLUSIVE
          and status.parsed.owner == "writer", status)
    downgrade = acquire("writer", shared)
    check("a shared acquire by the writer is a 409 mode-mismatch Problem",
          problem(downgrade, 409, "mode-mismatch"), downgrade)
    released = release_lock.sync_detailed(name, client=client, owner="writer")
    check("release by the writer is a 204", released.status_code == 204, released)


def several_locks(base):
    client = AuthenticatedClient(base_url=base, token=KEY, raise_on_unexpected_status=True)
    shared = MultiAcquireRequestLocksItemMode.SHARED

    def acquire(owner, locks, **extra):
        items = [MultiAcquireRequestLocksItem(resource=r, mode=m) for r, m in locks]
        return acquire_locks.sync_detailed(client=client, body=MultiAcquireRequest(
            owner=owner, ttl_seconds=30, locks=items, **extra))

    names = ["account:1/eu west", "rates"]
    granted = acquire("transfer-7", [(names[0], UNSET), (names[1], shared)], value={"transfer": 7})
    locks = granted.parsed.locks if isinstance(granted.parsed, MultiGranted) else []
    check("acquireLocks parses into MultiGranted: request order, modes, a token each, the value",
          [(lock.resource, lock.mode) for lock in locks] == [(names[0], Mode.EXCLUSIVE),
                                                            (names[1], Mode.SHARED)]
          and locks[0].fencing_token != locks[1].fencing_token
          and all(lock.value == {"transfer": 7} for lock in locks), granted)
    if len(locks) < 2:
        return
    one = get_lock.sync_detailed(names[0], client=client)
    hold = get_lock.sync_detailed(names[1], client=client)
    check("getLock shows each lock of the set (LockView, SharedHold)",
          isinstance(one.parsed, LockView) and one.parsed.fencing_token == locks[0].fencing_token
          and isinstance(hold.parsed, SharedHold)
          and [h.owner for h in hold.parsed.holders] == ["transfer-7"], (one, hold))

    refused = acquire("transfer-8", [("account:2", UNSET), (names[0], UNSET)])
    check("a set with a held lock parses into MultiUnavailable naming it",
          isinstance(refused.parsed, MultiUnavailable) and refused.parsed.acquired is False
          and refused.parsed.unavailable == [names[0]]
          and "retry-after" not in refused.headers, refused)
    untouched = get_lock.sync_detailed("account:2", client=client)
    check("...and holds nothing else", problem(untouched, 404, "not-found"), untouched)
    waited = acquire("transfer-8", [(names[0], UNSET)], wait_seconds=1)
    check("a wait that ends parses into MultiUnavailable, with Retry-After",
          isinstance(waited.parsed, MultiUnavailable)
          and int(waited.headers.get("retry-after", "0")) >= 1, waited)
    reader = acquire("reader-9", [("account:2", UNSET), (names[1], shared)])
    check("a reader beside the set's reader is granted", isinstance(reader.parsed, MultiGranted),
          reader)

    twice = acquire("transfer-8", [("a", UNSET), ("a", shared)])
    bad = MultiAcquireRequestLocksItem(resource="b", mode=UNSET)  # else "exclusive" overrides
    bad.additional_properties["mode"] = "read"
    wrong = acquire_locks.sync_detailed(client=client, body=MultiAcquireRequest(
        owner="transfer-8", ttl_seconds=30, locks=[bad]))
    check("a resource named twice and a bad mode are 422 Problems naming the field",
          all(problem(r, 422, "validation-failed") for r in (twice, wrong))
          and [(e.field, e.code) for e in twice.parsed.errors] == [("locks", "duplicate")]
          and [(e.field, e.code) for e in wrong.parsed.errors]
          == [("locks[0].mode", "invalid_value")], (twice, wrong))

    released = release_locks.sync_detailed(client=client, body=ReleaseManyRequest(
        owner="transfer-7", resources=[names[1], "account:2", "nothing", names[0]]))
    results = released.parsed.results if isinstance(released.parsed, ReleaseManyResponse) else []
    check("releaseLocks parses into ReleaseManyResponse, one result each, in order",
          [(r.resource, r.result, r.fencing_token) for r in results]
          == [(names[1], "released", locks[1].fencing_token), ("account:2", "forbidden", UNSET),
              ("nothing", "not_found", UNSET), (names[0], "released", locks[0].fencing_token)],
          released)


def values(base):
    client = AuthenticatedClient(base_url=base, token=KEY, raise_on_unexpected_status=True)
    name = "leader:billing/eu west"
    value = {"addr": "10.0.0.7:8443", "zone": "é 😀", "weights": [1.5, None, True]}

    def acquire(owner, **extra):
        return acquire_lock.sync_detailed(name, client=client, body=AcquireRequest(
            owner=owner, ttl_seconds=30, **extra))

    granted = acquire("node-a", value=value)
    check("a value set on acquire comes back in AcquireGranted",
          isinstance(granted.parsed, AcquireGranted) and granted.parsed.lock.value == value,
          granted)
    shown = get_lock.sync_detailed(name, client=client)
    listed = list_locks.sync_detailed(client=client, prefix="leader:")
    check("getLock and listLocks (LockList) show it",
          isinstance(shown.parsed, LockView) and shown.parsed.value == value
          and isinstance(listed.parsed, LockList)
          and [lock.value for lock in listed.parsed.locks] == [value], (shown, listed))
    kept = renew_lock.sync_detailed(name, client=client, body=RenewRequest(
        owner="node-a", ttl_seconds=60))
    regranted = acquire("node-a")
    check("a renew and a re-grant without a value keep it",
          isinstance(kept.parsed, LockView) and kept.parsed.value == value
          and isinstance(regranted.parsed, AcquireGranted)
          and regranted.parsed.lock.value == value, (kept, regranted))
    replaced = renew_lock.sync_detailed(name, client=client, body=RenewRequest(
        owner="node-a", ttl_seconds=60, value=["moved", 2]))
    check("a renew with a value replaces it",
          isinstance(replaced.parsed, LockView) and replaced.parsed.value == ["moved", 2], replaced)
    too_long = acquire("node-a", value="x" * 4095)
    check("a value over 4096 bytes of JSON is a 422 Problem on value",
          problem(too_long, 422, "validation-failed")
          and [(e.field, e.code) for e in too_long.parsed.errors] == [("value", "too_long")],
          too_long)
    release_lock.sync_detailed(name, client=client, owner="node-a")
    nxt = acquire("node-b")
    check("the next holder starts without one (value UNSET)",
          isinstance(nxt.parsed, AcquireGranted) and nxt.parsed.lock.value is UNSET, nxt)
    release_lock.sync_detailed(name, client=client, owner="node-b")

    for owner, extra in [("r1", {"value": "r1's"}), ("r2", {})]:
        acquire(owner, mode=AcquireRequestMode.SHARED, **extra)
    hold = get_lock.sync_detailed(name, client=client)
    check("each reader's own value in SharedHold",
          isinstance(hold.parsed, SharedHold)
          and [h.value for h in hold.parsed.holders] == ["r1's", UNSET], hold)


def fence_checks(base):
    client = AuthenticatedClient(base_url=base, token=KEY, raise_on_unexpected_status=True)
    name = "fenced/eu west"
    none = check_lock_fence.sync_detailed(name, client=client, token=1)
    check("a fence check with no holder parses into FenceStale with current None",
          isinstance(none.parsed, FenceStale) and none.parsed.valid is False
          and none.parsed.current is None, none)
    granted = acquire_lock.sync_detailed(
        name, client=client, body=AcquireRequest(owner="writer-1", ttl_seconds=30))
    token = granted.parsed.lock.fencing_token
    valid = check_lock_fence.sync_detailed(name, client=client, token=token)
    check("the holder's token parses into LockFenceValid with its lock",
          isinstance(valid.parsed, LockFenceValid) and valid.parsed.valid is True
          and valid.parsed.lock.owner == "writer-1"
          and valid.parsed.lock.fencing_token == token, valid)
    stale = check_lock_fence.sync_detailed(name, client=client, token=token + 100)
    check("another token parses into FenceStale with the holder's as current",
          isinstance(stale.parsed, FenceStale) and stale.parsed.current == token, stale)
    bad = check_lock_fence.sync_detailed(name, client=client, token=0)
    check("token 0 is a 422 Problem naming token", problem(bad, 422, "validation-failed")
          and [(e.field, e.code) for e in bad.parsed.errors] == [("token", "out_of_range")], bad)
    permit = acquire_permits.sync_detailed("fenced", client=client, body=PermitAcquireRequest(
        owner="exporter-1", ttl_seconds=30, limit=2)).parsed.permit
    fenced = check_semaphore_fence.sync_detailed(
        "fenced", client=client, token=permit.fencing_token)
    check("a live grant's token parses into PermitFenceValid",
          isinstance(fenced.parsed, PermitFenceValid)
          and fenced.parsed.permit.fencing_token == permit.fencing_token, fenced)


def main():
    with LockdProcess(api_keys={"default": KEY}) as lockd:
        try:
            scenario(lockd.base)
            semaphores(lockd.base)
            shared_locks(lockd.base)
            several_locks(lockd.base)
            values(lockd.base)
            fence_checks(lockd.base)
        except Exception as error:  # an unexpected status or an answer that does not parse
            check("the scenario runs to the end", False, repr(error))
    print(f"python-client: {passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
