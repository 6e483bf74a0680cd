"""lockd_client: locks, semaphore permits and election leadership on a lockd server, held for a
`with` block, renewed in the background, and reported lost before they can have run out.

The HTTP layer, `lockd_client.generated` (its `api` and `models`), is generated from lockd's
OpenAPI document; `Lockd.api_client()` gives a client for it."""

from .generated.client import AuthenticatedClient, Client
from .aio import AsyncLease, AsyncLockd
from .errors import AcquireUnknown, LeaseLost, LockdError, LockHeld
from .guard import Lease, Lockd
from .observe import ElectionEvent

__all__ = [
    "AcquireUnknown", "AsyncLease", "AsyncLockd", "AuthenticatedClient", "Client", "ElectionEvent",
    "Lease", "LeaseLost", "LockHeld", "Lockd", "LockdError",
]
