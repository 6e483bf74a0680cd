/**
 * The guards: hold a lock (or semaphore permits, or an election's office) for the length of a
 * callback, renewing the lease meanwhile and always releasing it afterwards.
 */
import type { CallOptions, LockdClient } from "./client.js";
import { LeaseLostError, LockdHttpError, LockHeldError, OutcomeUnknownError } from "./errors.js";
import { type KeeperOptions, type Lease, LeaseKeeper, type Renewal } from "./keeper.js";
import { defaultOwner } from "./owner.js";

export interface GuardOptions extends KeeperOptions {
  /** Lease length in whole seconds (`ttl_seconds`). */
  ttl: number;
  /** Seconds to wait for the lock when it is held (`wait_seconds`, default 0: answer at once). */
  wait?: number;
  /** The owner (candidate) string. Default: `defaultOwner()`, unique per call. */
  owner?: string;
  /** Timeout of the acquire request (ms). Default: (wait + 10) s. */
  acquireTimeoutMs?: number;
  /** Timeout of each release attempt (ms). Default: 2 s. */
  releaseTimeoutMs?: number;
  /** Cancels the acquire (then released as an acquire of unknown outcome). */
  signal?: AbortSignal;
}

export type GuardedWork<T> = (lease: Lease, signal: AbortSignal) => Promise<T> | T;

/** What a guard needs of one kind of lease. */
interface LeaseKind {
  name: string;
  acquire(owner: string, call: CallOptions): Promise<{ fencingToken: number; expiresAt: string } | null>;
  renew(owner: string, call: CallOptions): Promise<Renewal>;
  release(owner: string, call: CallOptions): Promise<unknown>;
}

/**
 * Holds the lock on `resource` while `work` runs, and returns what `work` returns.
 *
 * - Acquires with `ttl` and `wait`; throws `LockHeldError` when the lock is still held by
 *   another owner after the wait. When the answer took longer than ttl/3 (a wait), the lease is
 *   renewed before `work` starts, so `work` never starts on a lease mostly used up.
 * - An acquire whose outcome is unknown (5xx, timeout, network error) is followed by a release
 *   with the same owner (best effort, three attempts), then its `OutcomeUnknownError` is thrown.
 * - While `work` runs, the lease is renewed every ttl/3. `signal` is aborted, with a
 *   `LeaseLostError`, as soon as a renewal is refused (404, 403) or when renewals have failed
 *   until `lease.deadline` is less than the margin away: stop writing under the lock then.
 * - When `work` settles, renewing stops (a renewal in flight is awaited) and the lease is
 *   released, whatever happened. Then, if the lease was lost, `withLock` rejects with the
 *   `LeaseLostError` (even if `work` resolved: its writes may have been made without the lock);
 *   else it settles as `work` did. It never settles while `work` is still running.
 */
export function withLock<T>(client: LockdClient, resource: string, options: GuardOptions, work: GuardedWork<T>): Promise<T> {
  return hold(
    {
      name: resource,
      async acquire(owner, call) {
        const answer = await client.acquireLock(resource, { owner, ttlSeconds: options.ttl, waitSeconds: options.wait }, call);
        if (!("lock" in answer) || !answer.acquired) return null;
        return { fencingToken: answer.lock.fencing_token, expiresAt: answer.lock.expires_at };
      },
      async renew(owner, call) {
        const lock = await client.renewLock(resource, owner, options.ttl, call);
        return { expiresAt: lock.expires_at };
      },
      release: (owner, call) => client.releaseLock(resource, owner, call),
    },
    options,
    work,
  );
}

export interface PermitOptions extends GuardOptions {
  /** The semaphore's limit (every holder must use the same one). */
  limit: number;
  /** Permits to hold (default 1). */
  permits?: number;
}

/** As `withLock`, for `permits` of the semaphore `name` (at most `limit` held at once). */
export function withPermits<T>(client: LockdClient, name: string, options: PermitOptions, work: GuardedWork<T>): Promise<T> {
  return hold(
    {
      name,
      async acquire(owner, call) {
        const answer = await client.acquirePermits(
          name,
          { owner, ttlSeconds: options.ttl, limit: options.limit, permits: options.permits, waitSeconds: options.wait },
          call,
        );
        if (!("permit" in answer) || !answer.acquired) return null;
        return { fencingToken: answer.permit.fencing_token, expiresAt: answer.permit.expires_at };
      },
      async renew(owner, call) {
        const permit = await client.renewPermits(name, owner, options.ttl, call);
        return { expiresAt: permit.expires_at };
      },
      release: (owner, call) => client.releasePermits(name, owner, call),
    },
    options,
    work,
  );
}

export interface LeadershipOptions extends GuardOptions {
  /** The leader's value, shown to everyone reading the election. */
  value?: unknown;
}

/**
 * As `withLock`, for leading the election `name`: campaigns (waiting up to `wait`), runs `work`
 * as the leader (`lease.fencingToken` is the term) and resigns afterwards.
 */
export function withLeadership<T>(client: LockdClient, name: string, options: LeadershipOptions, work: GuardedWork<T>): Promise<T> {
  return hold(
    {
      name,
      async acquire(candidate, call) {
        const answer = await client.campaign(
          name,
          { candidate, ttlSeconds: options.ttl, waitSeconds: options.wait, value: options.value },
          call,
        );
        if (!answer.elected || !answer.leader || answer.leader.candidate !== candidate) return null;
        return { fencingToken: answer.leader.term, expiresAt: answer.leader.expires_at };
      },
      async renew(candidate, call) {
        const leader = await client.renewLeadership(name, candidate, options.ttl, call);
        return { expiresAt: leader.expires_at };
      },
      release: (candidate, call) => client.resign(name, candidate, call),
    },
    options,
    work,
  );
}

async function hold<T>(kind: LeaseKind, options: GuardOptions, work: GuardedWork<T>): Promise<T> {
  const { ttl, wait = 0 } = options;
  if (!Number.isInteger(ttl) || ttl < 1) throw new RangeError(`ttl must be a whole number of seconds >= 1, not ${ttl}`);
  if (!Number.isInteger(wait) || wait < 0) throw new RangeError(`wait must be a whole number of seconds >= 0, not ${wait}`);
  const owner = options.owner ?? defaultOwner();
  const releaseTimeoutMs = options.releaseTimeoutMs ?? 2000;

  const sentAt = performance.now();
  let granted;
  try {
    granted = await kind.acquire(owner, {
      timeoutMs: options.acquireTimeoutMs ?? (wait + 10) * 1000,
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof OutcomeUnknownError) {
      // The lease may have been granted: release it rather than leave it until its TTL ends.
      await release(kind, owner, releaseTimeoutMs, 3, options);
    }
    throw error;
  }
  if (!granted) throw new LockHeldError(kind.name, wait);

  // The lease is counted from when the acquire was sent. After a long wait most of that may be
  // gone although the grant is fresh: renew first, and count from the renewal instead.
  let leaseStart = sentAt;
  let expiresAt = granted.expiresAt;
  if (performance.now() - sentAt > (ttl * 1000) / 3) {
    const renewSentAt = performance.now();
    try {
      expiresAt = (await kind.renew(owner, { timeoutMs: (ttl * 1000) / 3 })).expiresAt;
      leaseStart = renewSentAt;
    } catch (error) {
      await release(kind, owner, releaseTimeoutMs, 3, options);
      if (error instanceof LockdHttpError) {
        throw new LeaseLostError(kind.name, `the renewal after the wait answered ${error.status}`, { cause: error });
      }
      throw error;
    }
  }

  const lease: Lease = {
    resource: kind.name,
    owner,
    fencingToken: granted.fencingToken,
    deadline: leaseStart + ttl * 1000,
    expiresAt,
    ttlSeconds: ttl,
  };
  const keeper = new LeaseKeeper(lease, (call) => kind.renew(owner, call), options);
  keeper.start(leaseStart);
  let result: T;
  try {
    result = await work(lease, keeper.signal);
  } catch (error) {
    throw keeper.lost ?? error;
  } finally {
    await keeper.stop();
    await release(kind, owner, releaseTimeoutMs, keeper.lost ? 1 : 3, options);
  }
  if (keeper.lost) throw keeper.lost;
  return result;
}

/** Releases, retrying a release of unknown outcome; never throws (a lease left ends at its TTL). */
async function release(kind: LeaseKind, owner: string, timeoutMs: number, attempts: number, options: KeeperOptions): Promise<void> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await kind.release(owner, { timeoutMs });
      return; // released, or nothing of ours to release (404, 403)
    } catch (error) {
      options.onError?.("release", error);
      if (!(error instanceof OutcomeUnknownError)) return;
      if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}
