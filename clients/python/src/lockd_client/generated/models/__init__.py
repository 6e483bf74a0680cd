""" Contains all the data models used in inputs/outputs """

from .acquire_granted import AcquireGranted
from .acquire_held import AcquireHeld
from .acquire_request import AcquireRequest
from .acquire_request_mode import AcquireRequestMode
from .campaign_request import CampaignRequest
from .campaign_response import CampaignResponse
from .election_fence_valid import ElectionFenceValid
from .election_list import ElectionList
from .end_session_force import EndSessionForce
from .ended_lease import EndedLease
from .fence_stale import FenceStale
from .field_error import FieldError
from .force_released_response import ForceReleasedResponse
from .health_status import HealthStatus
from .history_list import HistoryList
from .history_record_view import HistoryRecordView
from .hold_view import HoldView
from .leader_renew_request import LeaderRenewRequest
from .leader_view import LeaderView
from .listed_election_view import ListedElectionView
from .listed_lock_view import ListedLockView
from .listed_session_view import ListedSessionView
from .lock_fence_valid import LockFenceValid
from .lock_list import LockList
from .lock_view import LockView
from .mode import Mode
from .multi_acquire_request import MultiAcquireRequest
from .multi_acquire_request_locks_item import MultiAcquireRequestLocksItem
from .multi_acquire_request_locks_item_mode import MultiAcquireRequestLocksItemMode
from .multi_granted import MultiGranted
from .multi_unavailable import MultiUnavailable
from .openapi_document_response_200 import OpenapiDocumentResponse200
from .permit_acquire_request import PermitAcquireRequest
from .permit_fence_valid import PermitFenceValid
from .permit_granted import PermitGranted
from .permit_renew_request import PermitRenewRequest
from .permit_unavailable import PermitUnavailable
from .permit_view import PermitView
from .problem import Problem
from .proclaim_request import ProclaimRequest
from .proclaim_request_value_type_0 import ProclaimRequestValueType0
from .release_lock_force import ReleaseLockForce
from .release_many_request import ReleaseManyRequest
from .release_many_response import ReleaseManyResponse
from .release_one import ReleaseOne
from .release_outcome import ReleaseOutcome
from .release_permits_force import ReleasePermitsForce
from .release_request import ReleaseRequest
from .renew_request import RenewRequest
from .resign_at_name_force import ResignAtNameForce
from .resign_force import ResignForce
from .resign_request import ResignRequest
from .semaphore_list import SemaphoreList
from .semaphore_view import SemaphoreView
from .session_holds_response import SessionHoldsResponse
from .session_keep_alive_request import SessionKeepAliveRequest
from .session_list import SessionList
from .session_open_request import SessionOpenRequest
from .session_response import SessionResponse
from .session_view import SessionView
from .shared_hold import SharedHold

__all__ = (
    "AcquireGranted",
    "AcquireHeld",
    "AcquireRequest",
    "AcquireRequestMode",
    "CampaignRequest",
    "CampaignResponse",
    "ElectionFenceValid",
    "ElectionList",
    "EndedLease",
    "EndSessionForce",
    "FenceStale",
    "FieldError",
    "ForceReleasedResponse",
    "HealthStatus",
    "HistoryList",
    "HistoryRecordView",
    "HoldView",
    "LeaderRenewRequest",
    "LeaderView",
    "ListedElectionView",
    "ListedLockView",
    "ListedSessionView",
    "LockFenceValid",
    "LockList",
    "LockView",
    "Mode",
    "MultiAcquireRequest",
    "MultiAcquireRequestLocksItem",
    "MultiAcquireRequestLocksItemMode",
    "MultiGranted",
    "MultiUnavailable",
    "OpenapiDocumentResponse200",
    "PermitAcquireRequest",
    "PermitFenceValid",
    "PermitGranted",
    "PermitRenewRequest",
    "PermitUnavailable",
    "PermitView",
    "Problem",
    "ProclaimRequest",
    "ProclaimRequestValueType0",
    "ReleaseLockForce",
    "ReleaseManyRequest",
    "ReleaseManyResponse",
    "ReleaseOne",
    "ReleaseOutcome",
    "ReleasePermitsForce",
    "ReleaseRequest",
    "RenewRequest",
    "ResignAtNameForce",
    "ResignForce",
    "ResignRequest",
    "SemaphoreList",
    "SemaphoreView",
    "SessionHoldsResponse",
    "SessionKeepAliveRequest",
    "SessionList",
    "SessionOpenRequest",
    "SessionResponse",
    "SessionView",
    "SharedHold",
)
