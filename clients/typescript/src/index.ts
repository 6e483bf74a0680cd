/** lockd's TypeScript client: a typed HTTP client and guards that hold a lease while work runs. */
export { LockdClient } from "./client.js";
export type {
  AcquireLockBody,
  AcquireLocksBody,
  AcquirePermitsBody,
  AcquireResponse,
  CallOptions,
  CampaignBody,
  CampaignResponse,
  CandidateHolder,
  ClientOptions,
  Holder,
  HoldView,
  LeaderView,
  LockStatus,
  LockView,
  MultiAcquireResponse,
  OpenSessionBody,
  PermitAcquireResponse,
  PermitView,
  Problem,
  ReleaseOutcome,
  SessionHoldsResponse,
  SessionView,
} from "./client.js";
export { LeaseLostError, LockdHttpError, LockHeldError, OutcomeUnknownError, SessionLostError } from "./errors.js";
export { withLeadership, withLock, withPermits } from "./guard.js";
export type { GuardedWork, GuardOptions, LeadershipOptions, PermitOptions } from "./guard.js";
export type { KeeperOptions, Lease } from "./keeper.js";
export { Session, withSession } from "./session.js";
export type { Hold, HoldOptions, SessionOptions, SessionWork } from "./session.js";
export { defaultOwner } from "./owner.js";
export type { components, paths } from "./generated/openapi.js";
