"""lockd_client: locks, semaphore permits and election leadership on a lockd server, held for a
`with` block, renewed in the background, and reported lost before they can have run out; and
sessions, which keep many such holds alive with one keepalive and end them all at once.

The HTTP layer, `lockd_client.generated` (its `api` and `models`), is generated from lockd's
OpenAPI document; `Lockd.api_client()` gives a client for it."""

from .generated.client import AuthenticatedClient, Client
from ._session import Hold
from .aio import AsyncLease, AsyncLockd
from .aio_session import AsyncSession
from .errors import AcquireUnknown, LeaseLost, LockdError, LockHeld, SessionLost
from .guard import Lease, Lockd
from .observe import ElectionEvent
from .session import Session

__all__ = [
    "AcquireUnknown", "AsyncLease", "AsyncLockd", "AsyncSession", "AuthenticatedClient", "Client",
    "ElectionEvent", "Hold", "Lease", "LeaseLost", "LockHeld", "Lockd", "LockdError", "Session",
    "SessionLost",
]
