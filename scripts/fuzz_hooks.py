"""Schemathesis hooks for `make fuzz` (scripts/fuzz): the rules of lockd's API that its
OpenAPI document states in words because JSON Schema cannot state them.

1. A `cursor` is a `next_cursor` this server issued (`format: lockd-cursor`): the base64url text,
   without padding, of the version byte 1 and the UTF-8 bytes of a resource name. No pattern says
   that, so the format is registered here and valid data gets real cursors.
2. A release names its owner in the JSON body or in `?owner=`, and when it gives both they must
   agree. OpenAPI has no way to tie a query parameter to a body field, so a release that gives
   neither, or two that disagree, passes the schema and is refused (422, `owner`, `required` or
   `conflict`). Exactly those refusals are not counted as failures; every other one is. The same
   holds for a semaphore's release, and for an election's resign with `candidate`.
3. A semaphore acquire's `permits` is at most its `limit`. JSON Schema cannot compare two fields,
   so `permits` > `limit` passes the schema and is refused (422, `permits`, `out_of_range`):
   exactly that refusal is not counted.
4. The `locks` of `POST /locks` name each resource once. `uniqueItems` compares whole entries, so
   `{"resource": "a"}` and `{"resource": "a", "mode": "shared"}` pass the schema and are refused
   (422, `locks`, `duplicate`): exactly that refusal, for a body that does name a resource twice,
   is not counted (and the same for `resources` of `DELETE /locks`, should a generator repeat one).
5. A request body is at most 16 KiB (413, documented on every operation that takes a body). No
   schema bounds a body's size, and `POST /locks` with 64 entries full of unknown members (which
   are ignored) can pass it: a schema-violating body refused with 413 because it is that large is
   refused all the same, and is not counted.
6. A shared acquire (`"mode": "shared"`) has no lock-delay: its `lock_delay_seconds` must be 0.
   JSON Schema cannot tie one field to another's value, so a shared acquire with a positive
   `lock_delay_seconds` passes the schema and is refused (422, `lock_delay_seconds`,
   `invalid_value`): exactly that refusal is not counted.
7. A force-release (`force=true` on a release) takes a `reason` and nothing else: no owner (or
   candidate) in the query, no body. OpenAPI cannot make one query parameter require another or
   exclude a third, so such a request passes the schema and is refused (422, `reason` `required`,
   the owner `unknown_parameter`, `body` `unexpected`): exactly those refusals are not counted.
   The other way round, a `reason` belongs to a force-release only: a release by its owner that
   sends one is refused (422, `reason`, `unexpected`; with rule 2's errors when they apply), since
   a plain release must not look as if it kept a reason. Exactly that refusal is not counted.

8. A `session` takes the place of the holder (`owner`, or an election's `candidate`), of
   `ttl_seconds` and of `lock_delay_seconds` (docs/api.md, "Sessions"). JSON Schema cannot say
   "this field, or those", so the acquire bodies require none of them, and a body with the session
   and one of them, or with neither the session nor the holder, passes the schema and is refused
   (422: each of them `conflict`; or the holder, `ttl_seconds` `required`). A session id the
   server never issued (schemathesis cannot know a live one) is `404
   /problems/session-not-found`, and a renew naming a session `409 /problems/session-held`.
   Exactly those refusals are not counted (with the session's conflicts, those of rules 3, 4, 6
   and 7 too). Ending a session (`DELETE /sessions/{id}`) follows rule 7: `force=true` takes a
   `reason`, and a `reason` without `force` is refused (422, `reason`, `unexpected`).

And one inference of schemathesis's stateful phase does not fit semaphores: it links an acquire
to a release, a status and a renew of the same `{name}` as if the name were one resource with one
holder. A semaphore has many holders: after one releases, the others keep it (a status is still
200), and a renew by an owner that holds no permit is a 404 even though others acquired. Those
two stateful findings (ST301, ST302) on `/semaphores` are not counted; the contract suite and the
end-to-end tests check what they would.
"""

import atexit
import base64
import sys
from collections import Counter

import schemathesis
from hypothesis import strategies as st

# What `str::trim` removes (Unicode White_Space; lock-domain's `WHITESPACE` table).
WHITESPACE = "".join(
    chr(c)
    for first, last in [
        (0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
        (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
        (0x3000, 0x3000),
    ]
    for c in range(first, last + 1)
)


def cursor_of(name: str) -> str:
    encoded = base64.urlsafe_b64encode(b"\x01" + name.encode("utf-8"))
    return encoded.rstrip(b"=").decode("ascii")


# Resource names: 1 to 255 characters, no control characters (Cc; Cs cannot be UTF-8).
RESOURCE_NAMES = st.text(
    alphabet=st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=255
)
schemathesis.openapi.format("lockd-cursor", RESOURCE_NAMES.map(cursor_of))


def _owner_sources(case, field):
    query = case.query.get(field) if isinstance(case.query, dict) else None
    body = case.body.get(field) if isinstance(case.body, dict) else None
    return query, body


# How many refusals were not counted, by code: printed at the end, so a run shows what it let by.
NOT_COUNTED = Counter()


@atexit.register
def _report():
    if NOT_COUNTED:
        counts = ", ".join(f"{n} {code}" for code, n in sorted(NOT_COUNTED.items()))
        print(f"fuzz_hooks: not counted, by rule: {counts}", file=sys.stderr)


# The server's body limit (lock-http-actix's MAX_BODY_BYTES).
MAX_BODY_BYTES = 16 * 1024


def _body_bytes(case):
    """The size of the case's JSON body as sent (serialized as `requests` does: `json.dumps`)."""
    import json

    try:
        return len(json.dumps(case.body).encode("utf-8"))
    except (TypeError, ValueError):
        return 0


def _errors(response):
    """The `(field, code)` of each error of a 422 answer (none for another answer)."""
    if response.status_code != 422:
        return []
    try:
        errors = response.json().get("errors") or []
    except ValueError:
        return []
    return [(e.get("field"), e.get("code")) for e in errors]


def _refused_for(response, field, code):
    """Whether the answer is a 422 whose one error is `field` with `code`."""
    if response.status_code != 422:
        return False
    try:
        errors = response.json().get("errors") or []
    except ValueError:
        return False
    return [(e.get("field"), e.get("code")) for e in errors] == [(field, code)]


# The requests whose holder may be a session instead (rule 8).
SESSION_ACQUIRES = (
    "/locks/{resource}", "/locks", "/semaphores/{name}", "/elections/{name}/campaign",
    "/elections/{name}/proclaim",
)

# The fields a session takes the place of (rule 8).
SESSION_REPLACES = ("owner", "candidate", "ttl_seconds", "lock_delay_seconds")


def _problem_type(response):
    try:
        return (response.json() or {}).get("type")
    except ValueError:
        return None


def _session_refusal(case, response):
    """Whether the answer is one of rule 8's refusals for this case."""
    body = case.body if isinstance(case.body, dict) else {}
    query = case.query if isinstance(case.query, dict) else {}
    named = body.get("session") is not None or query.get("session") is not None
    if named and response.status_code == 404:
        return _problem_type(response) == "/problems/session-not-found"
    if named and response.status_code == 409:
        return _problem_type(response) == "/problems/session-held"
    errors = _errors(response)
    if not errors:
        return False
    if named:
        # With the session's conflicts, the refusals other rules let by (3, 4, 6, 7).
        others = {("permits", "out_of_range"), ("locks", "duplicate"),
                  ("lock_delay_seconds", "invalid_value"), ("reason", "unexpected")}
        return any(code == "conflict" for _, code in errors) and all(
            (code == "conflict" and field in SESSION_REPLACES) or (field, code) in others
            for field, code in errors)
    if case.method.upper() != "POST" or case.path not in SESSION_ACQUIRES:
        return False
    holder = ("owner", "candidate", "ttl_seconds")
    return all(code == "required" and field in holder for field, code in errors)


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but those the schema cannot rule out (see the module's docstring)."""
    if _session_refusal(case, response):
        NOT_COUNTED["a session and a holder, neither, or a session not live"] += 1
        return False
    on_semaphores = case.path.startswith("/semaphores")
    if failure.code in ("ST301", "ST302") and on_semaphores:
        NOT_COUNTED[f"{failure.code} on a semaphore (many holders)"] += 1
        return False
    is_acquire = case.method.upper() == "POST" and case.path == "/semaphores/{name}"
    if failure.code == "ST202" and is_acquire and isinstance(case.body, dict):
        permits, limit = case.body.get("permits"), case.body.get("limit")
        numbers = all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in (permits, limit))
        if numbers and permits > limit and _refused_for(response, "permits", "out_of_range"):
            NOT_COUNTED["permits over the limit"] += 1
            return False
    is_lock_acquire = case.method.upper() == "POST" and case.path == "/locks/{resource}"
    if failure.code == "ST202" and is_lock_acquire and isinstance(case.body, dict):
        delay = case.body.get("lock_delay_seconds")
        positive = isinstance(delay, (int, float)) and not isinstance(delay, bool) and delay > 0
        if case.body.get("mode") == "shared" and positive and _refused_for(
                response, "lock_delay_seconds", "invalid_value"):
            NOT_COUNTED["a shared acquire with a lock-delay"] += 1
            return False
    if failure.code == "ST201" and response.status_code == 413 and _body_bytes(case) > MAX_BODY_BYTES:
        NOT_COUNTED["a body over 16 KiB refused with 413"] += 1
        return False
    if failure.code == "ST202" and case.path == "/locks" and isinstance(case.body, dict):
        field = "locks" if case.method.upper() == "POST" else "resources"
        names = case.body.get(field)
        if isinstance(names, list):
            names = [n.get("resource") if isinstance(n, dict) else n for n in names]
            hashable = [n for n in names if isinstance(n, str)]
            repeated = len(set(hashable)) < len(hashable)
            if repeated and _refused_for(response, field, "duplicate"):
                NOT_COUNTED[f"{field} naming a resource twice"] += 1
                return False
    if failure.code == "ST202" and case.method.upper() == "DELETE" and case.path == "/sessions/{id}":
        query = case.query if isinstance(case.query, dict) else {}
        errors = _errors(response)
        if "force" in query:
            allowed = {("reason", "required")}
        elif "reason" in query:
            allowed = {("reason", "unexpected")}
        else:
            allowed = set()
        if response.status_code == 422 and errors and set(errors) <= allowed:
            NOT_COUNTED["a session's end with a reason and no force, or force and no reason"] += 1
            return False
    is_release = case.method.upper() == "DELETE" and case.path in (
        "/locks/{resource}", "/semaphores/{name}", "/elections/{name}", "/elections/{name}/leader")
    if failure.code != "ST202" or not is_release:
        return True
    field = "candidate" if case.path.startswith("/elections") else "owner"
    if isinstance(case.query, dict) and "force" in case.query:
        allowed = {("reason", "required"), (field, "unknown_parameter"), ("body", "unexpected"),
                   ("session", "unknown_parameter")}
        errors = _errors(response)
        if response.status_code == 422 and errors and all(e in allowed for e in errors):
            NOT_COUNTED["a force-release with an owner, a body or no reason"] += 1
            return False
        return True
    query, body = _owner_sources(case, field)
    expected = set()
    # A session (`?session=`) names the holder as an owner or candidate does.
    session = isinstance(case.query, dict) and case.query.get("session") is not None
    if query is None and body is None and not session:
        expected.add((field, "required"))
    elif isinstance(query, str) and isinstance(body, str) and query.strip(WHITESPACE) != body.strip(WHITESPACE):
        expected.add((field, "conflict"))
    if isinstance(case.query, dict) and "reason" in case.query:
        expected.add(("reason", "unexpected"))
    errors = _errors(response)
    if not expected or len(errors) != len(expected) or set(errors) != expected:
        return True
    for rule in expected:
        NOT_COUNTED["a reason without force" if rule[0] == "reason" else rule[1]] += 1
    return False
