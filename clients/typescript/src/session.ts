/**
 * The session guard: one session kept alive in the background, locks (either mode), sets of
 * locks, semaphore permits and election campaigns taken under it, a signal aborted before it can
 * be lost, jeopardy while keepalives fail, and the session ended (every hold with it) afterwards.
 */
import type { CallOptions, LockdClient, LockView, ReleaseOutcome, SessionView } from "./client.js";
import { LockdHttpError, LockHeldError, OutcomeUnknownError, SessionLostError } from "./errors.js";
import { type KeeperOptions, type KeptLease, LeaseKeeper } from "./keeper.js";

/** One hold taken under a session. It ends with the session (or `session.release(hold)`). */
export interface Hold {
  readonly kind: "lock" | "semaphore" | "election";
  /** The lock's resource, the semaphore's or the election's name. */
  readonly name: string;
  /** The hold's own fencing token (an election's term): send it with every write made under it. */
  readonly fencingToken: number;
  /** A lock's mode. */
  readonly mode?: "exclusive" | "shared";
  /** A semaphore hold's permits. */
  readonly permits?: number;
}

export interface SessionOptions extends Omit<KeeperOptions, "onError"> {
  /** The session's TTL in whole seconds: it ends this long after the last keepalive. */
  ttl: number;
  /** The label every hold shows as its owner (the session's id when absent). */
  owner?: string;
  /** Seconds each hold's place stays kept from others once the session runs out (server default). */
  lockDelay?: number;
  /** Timeout of the open request (ms). Default: 10 s. */
  openTimeoutMs?: number;
  /** Timeout of each attempt to end the session or release a hold (ms). Default: 2 s. */
  releaseTimeoutMs?: number;
  /** The first keepalive that failed (no answer, a 5xx): the session may still be alive. */
  onJeopardy?: (session: Session) => void;
  /** A keepalive got through after `onJeopardy`: safe again. */
  onSafe?: (session: Session) => void;
  /** Told of every failed keepalive, hold release and end (the guard goes on by itself). */
  onError?: (phase: "keepalive" | "release" | "end", error: unknown) => void;
}

/** Options of one acquire under a session. */
export interface HoldOptions {
  /** Seconds to wait while another holder has it (`wait_seconds`, default 0: answer at once). */
  wait?: number;
  /** A value stored with the hold (a leader's address, a job's progress). */
  value?: unknown;
  /** Timeout of the acquire request (ms). Default: (wait + 10) s. */
  timeoutMs?: number;
  /** Cancels the acquire (then released as an acquire of unknown outcome). */
  signal?: AbortSignal;
}

export type SessionWork<T> = (session: Session, signal: AbortSignal) => Promise<T> | T;

const SESSION_NOT_FOUND = "/problems/session-not-found";

/**
 * Opens a session, runs `work` with it, and ends the session (every hold with it) when `work`
 * settles, whatever happened; returns what `work` returns.
 *
 * - The session is kept alive every ttl/3, by the leases' rules (`withLock`): `session.deadline`
 *   is the send time of the last successful keepalive (or of the open) plus the TTL.
 * - **Jeopardy**: the first keepalive that fails (a 5xx, a timeout, a network error) calls
 *   `onJeopardy` and sets `session.inJeopardy`; the next that gets through calls `onSafe` and
 *   clears it. The session may still be alive meanwhile.
 * - **Lost**: `signal` is aborted with a `SessionLostError` when a keepalive is refused (404: the
 *   session was closed, forced or ran out) or when keepalives have failed until the deadline is
 *   less than the margin away (`min(ttl/5, 2 s)`): before the session can have ended. Stop
 *   writing under any of its holds then. `withSession` then rejects with that error once `work`
 *   settles, as `withLock` does.
 */
export async function withSession<T>(client: LockdClient, options: SessionOptions, work: SessionWork<T>): Promise<T> {
  const session = await Session.open(client, options);
  let result: T;
  try {
    result = await work(session, session.signal);
  } catch (error) {
    throw session.lost ?? error;
  } finally {
    await session.close();
  }
  if (session.lost) throw session.lost;
  return result;
}

/** An open session (see `withSession`); `Session.open(client, options)`, then `close()`. */
export class Session {
  readonly #client: LockdClient;
  readonly #options: SessionOptions;
  readonly #kept: KeptLease;
  readonly #keeper: LeaseKeeper;
  readonly #held = new Set<string>();
  #view: SessionView;
  #inJeopardy = false;
  #closed: Promise<void> | undefined;

  /**
   * Opens a session (`POST /sessions`) and starts keeping it alive. Throws `OutcomeUnknownError`
   * when the open may or may not have happened (a session opened unseen holds nothing and runs
   * out by itself), `LockdHttpError` when it was refused.
   */
  static async open(client: LockdClient, options: SessionOptions): Promise<Session> {
    const { ttl, lockDelay } = options;
    if (!Number.isInteger(ttl) || ttl < 1) throw new RangeError(`ttl must be a whole number of seconds >= 1, not ${ttl}`);
    const sentAt = performance.now();
    const view = await client.openSession(
      { ttlSeconds: ttl, owner: options.owner, lockDelaySeconds: lockDelay },
      { timeoutMs: options.openTimeoutMs ?? 10_000 },
    );
    return new Session(client, options, view, sentAt);
  }

  private constructor(client: LockdClient, options: SessionOptions, view: SessionView, sentAt: number) {
    this.#client = client;
    this.#options = options;
    this.#view = view;
    this.#kept = { resource: view.owner, deadline: sentAt + options.ttl * 1000, expiresAt: view.expires_at, ttlSeconds: options.ttl };
    const keeperOptions: KeeperOptions = {
      marginMs: options.marginMs,
      retryMs: options.retryMs,
      onError: (_phase, error) => options.onError?.("keepalive", error),
    };
    this.#keeper = new LeaseKeeper(
      this.#kept,
      async (call) => {
        this.#view = await client.keepSessionAlive(this.id, undefined, call);
        return { expiresAt: this.#view.expires_at };
      },
      keeperOptions,
      {
        failed: () => this.#jeopardy(true),
        renewed: () => this.#jeopardy(false),
        lostError: (message, cause) =>
          new SessionLostError(view.owner, message, cause === undefined ? undefined : { cause }),
      },
    );
    this.#keeper.start(sentAt);
  }

  /** The session's id: anyone with it may act for the session, so keep it as secret as a key. */
  get id(): string {
    return this.#view.id;
  }

  /** The label every hold shows as its owner. */
  get owner(): string {
    return this.#view.owner;
  }

  get ttlSeconds(): number {
    return this.#kept.ttlSeconds;
  }

  /** A `performance.now()` time before which the session is surely live (moves with each keepalive). */
  get deadline(): number {
    return this.#kept.deadline;
  }

  /** The server's `expires_at` for the session, and every hold, as last seen. */
  get expiresAt(): string {
    return this.#kept.expiresAt;
  }

  /** Aborted, with a `SessionLostError` as its reason, before the session can be lost. */
  get signal(): AbortSignal {
    return this.#keeper.signal;
  }

  /** The error the signal was aborted with, if it was. */
  get lost(): SessionLostError | undefined {
    return this.#keeper.lost as SessionLostError | undefined;
  }

  /** Whether the last keepalive failed (and none got through since). */
  get inJeopardy(): boolean {
    return this.#inJeopardy;
  }

  /**
   * The lock on `resource` (`mode` exclusive, the default, or shared) under the session. Throws
   * `LockHeldError` when another holder still has it after `wait`, the `SessionLostError` when
   * the session is lost (or the server says it has ended), `OutcomeUnknownError` after
   * releasing what an acquire of unknown outcome may have granted (not what the session held
   * before it), `LockdHttpError` for a refused request.
   */
  async lock(resource: string, options: HoldOptions & { mode?: "exclusive" | "shared" } = {}): Promise<Hold> {
    const [hold] = await this.#take([{ kind: "lock", name: resource }], options, async (call) => {
      const answer = await this.#client.acquireLock(
        resource,
        { session: this.id, mode: options.mode, waitSeconds: options.wait, value: options.value },
        call,
      );
      return "lock" in answer && answer.acquired ? [lockHold(answer.lock)] : null;
    });
    return hold!;
  }

  /** Several locks together or none (names, or `{ resource, mode }`), one hold each, in order. */
  async locks(locks: (string | { resource: string; mode?: "exclusive" | "shared" })[], options: HoldOptions = {}): Promise<Hold[]> {
    const wanted = locks.map((lock) => (typeof lock === "string" ? { resource: lock } : lock));
    const names = wanted.map((lock) => ({ kind: "lock" as const, name: lock.resource }));
    return this.#take(names, options, async (call) => {
      const answer = await this.#client.acquireLocks(
        { session: this.id, locks: wanted, waitSeconds: options.wait, value: options.value },
        call,
      );
      return "locks" in answer && answer.acquired ? answer.locks.map(lockHold) : null;
    });
  }

  /** `permits` (default 1) of semaphore `name`, at most `limit` held at once, under the session. */
  async permits(name: string, options: HoldOptions & { limit: number; permits?: number }): Promise<Hold> {
    const [hold] = await this.#take([{ kind: "semaphore", name }], options, async (call) => {
      const answer = await this.#client.acquirePermits(
        name,
        { session: this.id, limit: options.limit, permits: options.permits, waitSeconds: options.wait, value: options.value },
        call,
      );
      if (!("permit" in answer) || !answer.acquired) return null;
      const { permit } = answer;
      return [{ kind: "semaphore", name: permit.name, fencingToken: permit.fencing_token, permits: permit.permits }];
    });
    return hold!;
  }

  /** Leadership of election `name` under the session (`hold.fencingToken` is the term). */
  async campaign(name: string, options: HoldOptions = {}): Promise<Hold> {
    const [hold] = await this.#take([{ kind: "election", name }], options, async (call) => {
      const answer = await this.#client.campaign(
        name,
        { session: this.id, waitSeconds: options.wait, value: options.value },
        call,
      );
      if (!answer.elected || !answer.leader || answer.leader.session !== this.id) return null;
      return [{ kind: "election", name: answer.leader.election, fencingToken: answer.leader.term }];
    });
    return hold!;
  }

  /**
   * Releases one hold; the session and its other holds go on. `true` when it was released now;
   * `false` when there was nothing of the session's to release, or no attempt was answered
   * (told to `onError`; the hold ends with the session at the latest).
   */
  async release(hold: Hold): Promise<boolean> {
    this.#held.delete(key(hold));
    return (await this.#release(hold, 2)) === "released";
  }

  /**
   * Stops the keepalives (one in flight is awaited, so none follows) and ends the session,
   * releasing every hold at once (retried briefly when its outcome is unknown; never throws:
   * a session left behind ends at its TTL). Calling it again waits for the first call.
   */
  close(): Promise<void> {
    this.#closed ??= this.#end();
    return this.#closed;
  }

  async #end(): Promise<void> {
    await this.#keeper.stop();
    const attempts = this.lost ? 1 : 3;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        await this.#client.endSession(this.id, { timeoutMs: this.#options.releaseTimeoutMs ?? 2000 });
        return; // ended now, or it had ended already
      } catch (error) {
        this.#options.onError?.("end", error);
        if (!(error instanceof OutcomeUnknownError)) return;
        if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }

  async #take(
    names: { kind: Hold["kind"]; name: string }[],
    options: HoldOptions,
    acquire: (call: CallOptions) => Promise<Hold[] | null>,
  ): Promise<Hold[]> {
    if (this.lost) throw this.lost;
    if (this.#closed) throw new Error(`session ${this.owner} is closed`);
    const wait = options.wait ?? 0;
    let holds;
    try {
      holds = await acquire({ timeoutMs: options.timeoutMs ?? (wait + 10) * 1000, signal: options.signal });
    } catch (error) {
      if (error instanceof OutcomeUnknownError) {
        // It may have been granted: release it, unless the session held it before (a re-grant).
        const unseen = names.filter((hold) => !this.#held.has(key(hold)));
        await Promise.all(unseen.map((hold) => this.#release(hold, 3)));
      } else if (error instanceof LockdHttpError && error.status === 404 && problemType(error.problem) === SESSION_NOT_FOUND) {
        this.#keeper.lose("an acquire answered 404 session-not-found: the session has ended", error);
        throw this.lost ?? error;
      }
      throw error;
    }
    if (!holds) throw new LockHeldError(names.map((hold) => hold.name).join(", "), wait);
    for (const hold of holds) this.#held.add(key(hold));
    return holds;
  }

  async #release(hold: Pick<Hold, "kind" | "name">, attempts: number): Promise<ReleaseOutcome | undefined> {
    const holder = { session: this.id };
    const call = { timeoutMs: this.#options.releaseTimeoutMs ?? 2000 };
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        if (hold.kind === "lock") return await this.#client.releaseLock(hold.name, holder, call);
        if (hold.kind === "semaphore") return await this.#client.releasePermits(hold.name, holder, call);
        return await this.#client.resign(hold.name, holder, call);
      } catch (error) {
        this.#options.onError?.("release", error);
        if (!(error instanceof OutcomeUnknownError)) return undefined;
        if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
    return undefined;
  }

  #jeopardy(now: boolean): void {
    if (this.#inJeopardy === now) return;
    this.#inJeopardy = now;
    try {
      (now ? this.#options.onJeopardy : this.#options.onSafe)?.(this);
    } catch {
      // A callback's failure is the caller's: the keepalives go on.
    }
  }
}

function lockHold(lock: LockView): Hold {
  return { kind: "lock", name: lock.resource, fencingToken: lock.fencing_token, mode: lock.mode };
}

function key(hold: Pick<Hold, "kind" | "name">): string {
  return `${hold.kind}\u0000${hold.name}`;
}

function problemType(problem: unknown): unknown {
  return problem && typeof problem === "object" ? (problem as { type?: unknown }).type : undefined;
}
