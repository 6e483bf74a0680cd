/**
 * Keeps one lease alive (a lease of its own, or a session's): renews it every ttl/3 on the
 * monotonic clock and aborts a signal before the lease can run out when renewals fail.
 */
import { LeaseLostError, LockdHttpError } from "./errors.js";
import type { CallOptions } from "./client.js";

/** What a keeper keeps: `deadline` and `expiresAt` move forward with every successful renewal. */
export interface KeptLease {
  /** The lock's resource, the semaphore's or the election's name; a session's owner label. */
  readonly resource: string;
  /**
   * A `performance.now()` time before which the lease is surely still held: the time the
   * acquire or the last successful renewal was sent, plus the TTL. It does not depend on the
   * server's clock or on the network's delay.
   */
  deadline: number;
  /** The server's `expires_at` (its wall clock, RFC 3339) as last seen. */
  expiresAt: string;
  readonly ttlSeconds: number;
}

/** A held lease. */
export interface Lease extends KeptLease {
  readonly owner: string;
  /** The fencing token (an election's term): send it with every write made under the lease. */
  readonly fencingToken: number;
}

export interface Renewal {
  expiresAt: string;
}

export interface KeeperOptions {
  /** The signal aborts this long before `deadline` (ms). Default: min(ttl/5, 2 s). */
  marginMs?: number;
  /** Delay before retrying a failed renewal (ms). Default: ttl/10, between 100 ms and 1 s. */
  retryMs?: number;
  /** Told of every failed renewal and release (the guard goes on by itself). */
  onError?: (phase: "renew" | "release", error: unknown) => void;
}

/** What a keeper tells its user beyond the signal (a session's jeopardy). */
export interface KeeperHooks {
  /** A renewal failed in a way that leaves the lease possibly alive (no answer, a 5xx): retried. */
  failed?(error: unknown): void;
  /** A renewal got through. */
  renewed?(): void;
  /** The error the signal is aborted with. Default: a `LeaseLostError`. */
  lostError?(message: string, cause: unknown): LeaseLostError;
}

export class LeaseKeeper {
  readonly #controller = new AbortController();
  readonly #ttlMs: number;
  readonly #marginMs: number;
  readonly #retryMs: number;
  #renewTimer: NodeJS.Timeout | undefined;
  #lostTimer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #lastError: unknown;
  #stopped = false;
  #lost: LeaseLostError | undefined;

  constructor(
    readonly lease: KeptLease,
    private readonly renew: (call: CallOptions) => Promise<Renewal>,
    private readonly options: KeeperOptions = {},
    private readonly hooks: KeeperHooks = {},
  ) {
    this.#ttlMs = lease.ttlSeconds * 1000;
    this.#marginMs = options.marginMs ?? Math.min(this.#ttlMs / 5, 2000);
    this.#retryMs = options.retryMs ?? Math.min(1000, Math.max(100, this.#ttlMs / 10));
  }

  /** Aborted, with a `LeaseLostError` as its reason, before the lease can be lost. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The error the signal was aborted with, if it was. */
  get lost(): LeaseLostError | undefined {
    return this.#lost;
  }

  start(sentAt: number): void {
    this.#armLostTimer();
    this.#schedule(sentAt + this.#ttlMs / 3 - performance.now());
  }

  /**
   * Stops renewing: no renewal is sent after this resolves. A renewal in flight is awaited (its
   * own timeout ends it before the deadline), so a release sent afterwards is the last request.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#lostTimer);
    while (this.#inFlight) await this.#inFlight;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped || this.#lost) return;
    this.#renewTimer = setTimeout(() => {
      this.#renewTimer = undefined;
      if (this.#stopped || this.#lost) return;
      this.#inFlight = this.#renewOnce().finally(() => {
        this.#inFlight = undefined;
      });
    }, Math.max(0, delayMs));
  }

  #armLostTimer(): void {
    clearTimeout(this.#lostTimer);
    const left = this.lease.deadline - this.#marginMs - performance.now();
    this.#lostTimer = setTimeout(() => {
      this.lose("renewals failed until the lease's deadline came near", this.#lastError);
    }, Math.max(0, left));
  }

  async #renewOnce(): Promise<void> {
    const sentAt = performance.now();
    const budget = this.lease.deadline - this.#marginMs - sentAt;
    if (budget <= 0) {
      this.lose("no time left to renew", this.#lastError);
      return;
    }
    try {
      const renewal = await this.renew({ timeoutMs: budget });
      if (this.#stopped || this.#lost) return;
      this.lease.deadline = Math.max(this.lease.deadline, sentAt + this.#ttlMs);
      this.lease.expiresAt = renewal.expiresAt;
      this.#lastError = undefined;
      this.#armLostTimer();
      this.#schedule(sentAt + this.#ttlMs / 3 - performance.now());
      this.hooks.renewed?.();
    } catch (error) {
      this.options.onError?.("renew", error);
      if (error instanceof LockdHttpError) {
        // 404: the lease ended; 403: another owner holds it; anything else will not get better.
        this.lose(`renewal answered ${error.status}`, error);
        return;
      }
      this.#lastError = error;
      this.#schedule(this.#retryMs);
      if (!this.#stopped && !this.#lost) this.hooks.failed?.(error);
    }
  }

  /** Aborts the signal now (once): the lease is known to be gone, or cannot be counted on. */
  lose(message: string, cause: unknown): void {
    if (this.#lost || this.#stopped) return;
    const options = cause === undefined ? undefined : { cause };
    this.#lost = this.hooks.lostError?.(message, options?.cause) ?? new LeaseLostError(this.lease.resource, message, options);
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#lostTimer);
    this.#controller.abort(this.#lost);
  }
}
