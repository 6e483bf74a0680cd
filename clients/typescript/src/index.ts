/** lockd's TypeScript client: a typed HTTP client and guards that hold a lease while work runs. */
export { LockdClient } from "./client.js";
export type {
  AcquireLockBody,
  AcquirePermitsBody,
  AcquireResponse,
  CallOptions,
  CampaignBody,
  CampaignResponse,
  ClientOptions,
  LeaderView,
  LockStatus,
  LockView,
  PermitAcquireResponse,
  PermitView,
  Problem,
  ReleaseOutcome,
} from "./client.js";
export { LeaseLostError, LockdHttpError, LockHeldError, OutcomeUnknownError } from "./errors.js";
export { withLeadership, withLock, withPermits } from "./guard.js";
export type { GuardedWork, GuardOptions, LeadershipOptions, PermitOptions } from "./guard.js";
export type { KeeperOptions, Lease } from "./keeper.js";
export { defaultOwner } from "./owner.js";
export type { components, paths } from "./generated/openapi.js";
