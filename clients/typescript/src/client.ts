/**
 * A thin, typed HTTP client for lockd's lock, semaphore, election and session endpoints. The
 * request and answer types come from `src/generated/openapi.ts`, generated from lockd's OpenAPI
 * document.
 */
import type { components } from "./generated/openapi.js";
import { LockdHttpError, OutcomeUnknownError } from "./errors.js";

type Schemas = components["schemas"];
export type LockView = Schemas["LockView"];
export type LockStatus = Schemas["LockStatus"];
export type AcquireResponse = Schemas["AcquireResponse"];
export type AcquireGranted = Schemas["AcquireGranted"];
export type PermitView = Schemas["PermitView"];
export type PermitAcquireResponse = Schemas["PermitAcquireResponse"];
export type PermitGranted = Schemas["PermitGranted"];
export type LeaderView = Schemas["LeaderView"];
export type CampaignResponse = Schemas["CampaignResponse"];
export type Problem = Schemas["Problem"];
export type MultiAcquireResponse = Schemas["MultiAcquireResponse"];
export type SessionView = Schemas["SessionView"];
export type SessionHoldsResponse = Schemas["SessionHoldsResponse"];
export type HoldView = Schemas["HoldView"];

/** How a release ended: released (204), nothing live to release (404), held by another (403). */
export type ReleaseOutcome = Schemas["ReleaseOutcome"];

export interface ClientOptions {
  /** lockd's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when the server runs with `--api-keys-file`. */
  apiKey?: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

/** Per-call options: a timeout of its own, and a signal that cancels the call. */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Who holds a lease: an owner, with a lease of its own of `ttlSeconds`; or a session (its id,
 * from `openSession`), whose lease the hold shares: it lives while the session does.
 */
export type Holder =
  | { owner: string; ttlSeconds: number; session?: undefined }
  | { session: string; owner?: undefined; ttlSeconds?: undefined };

/** As `Holder`, for an election, whose holders are candidates. */
export type CandidateHolder =
  | { candidate: string; ttlSeconds: number; session?: undefined }
  | { session: string; candidate?: undefined; ttlSeconds?: undefined };

export type AcquireLockBody = Holder & {
  waitSeconds?: number;
  mode?: "exclusive" | "shared";
  value?: unknown;
};

export type AcquireLocksBody = Holder & {
  /** 1 to 64 distinct resources, each `exclusive` (the default) or `shared`. */
  locks: { resource: string; mode?: "exclusive" | "shared" }[];
  waitSeconds?: number;
  value?: unknown;
};

export type AcquirePermitsBody = Holder & {
  limit: number;
  permits?: number;
  waitSeconds?: number;
  value?: unknown;
};

export type CampaignBody = CandidateHolder & {
  waitSeconds?: number;
  value?: unknown;
};

export interface OpenSessionBody {
  ttlSeconds: number;
  /** The label every hold shows as its owner (the session's id when absent). */
  owner?: string;
  /** Seconds each hold's place stays kept from others once the session runs out. */
  lockDelaySeconds?: number;
}

interface Answer {
  status: number;
  body: unknown;
}

/**
 * One method per endpoint. Every method throws `OutcomeUnknownError` when the request may or may
 * not have taken effect (a 5xx answer, a timeout, a network error, the signal aborted), and
 * `LockdHttpError` for any other answer it does not return.
 */
export class LockdClient {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions | string) {
    const opts = typeof options === "string" ? { baseUrl: options } : options;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.#apiKey = opts.apiKey;
    this.#fetch = opts.fetch ?? globalThis.fetch;
  }

  /** `POST /locks/{resource}`: `{acquired: true, lock}` or `{acquired: false, resource}`. */
  async acquireLock(resource: string, body: AcquireLockBody, call?: CallOptions): Promise<AcquireResponse> {
    const request: Schemas["AcquireRequest"] = {
      ...holderFields(body),
      mode: body.mode ?? "exclusive",
      ...(body.waitSeconds ? { wait_seconds: body.waitSeconds } : {}),
      ...(body.value !== undefined ? { value: body.value } : {}),
    };
    return this.#expect(200, await this.#send("POST", lockPath(resource), request, call)) as AcquireResponse;
  }

  /** `POST /locks/{resource}/renew`: the lock with its new `expires_at`; 404 and 403 throw. */
  async renewLock(resource: string, owner: string, ttlSeconds: number, call?: CallOptions): Promise<LockView> {
    const request: Schemas["RenewRequest"] = { owner, ttl_seconds: ttlSeconds };
    return this.#expect(200, await this.#send("POST", `${lockPath(resource)}/renew`, request, call)) as LockView;
  }

  /** `DELETE /locks/{resource}`: the owner's lease, or a session's hold (`{ session: id }`). */
  async releaseLock(resource: string, holder: string | { session: string }, call?: CallOptions): Promise<ReleaseOutcome> {
    return this.#release(lockPath(resource), "owner", holder, call);
  }

  /** `POST /locks`: several locks together or none: `{acquired: true, locks}` or `{acquired: false, unavailable}`. */
  async acquireLocks(body: AcquireLocksBody, call?: CallOptions): Promise<MultiAcquireResponse> {
    const request: Schemas["MultiAcquireRequest"] = {
      ...holderFields(body),
      locks: body.locks.map((lock) => ({ resource: lock.resource, mode: lock.mode ?? "exclusive" })),
      ...(body.waitSeconds ? { wait_seconds: body.waitSeconds } : {}),
      ...(body.value !== undefined ? { value: body.value } : {}),
    };
    return this.#expect(200, await this.#send("POST", "/locks", request, call)) as MultiAcquireResponse;
  }

  /** `GET /locks/{resource}`: the live lock (or shared hold), or `null` when it is free. */
  async getLock(resource: string, call?: CallOptions): Promise<LockStatus | null> {
    const answer = await this.#send("GET", lockPath(resource), undefined, call);
    if (answer.status === 404) return null;
    return this.#expect(200, answer) as LockStatus;
  }

  /** `POST /semaphores/{name}`: `{acquired: true, permit}` or `{acquired: false, available}`. */
  async acquirePermits(name: string, body: AcquirePermitsBody, call?: CallOptions): Promise<PermitAcquireResponse> {
    const request: Schemas["PermitAcquireRequest"] = {
      ...holderFields(body),
      limit: body.limit,
      permits: body.permits ?? 1,
      ...(body.waitSeconds ? { wait_seconds: body.waitSeconds } : {}),
      ...(body.value !== undefined ? { value: body.value } : {}),
    };
    const path = `/semaphores/${encodeURIComponent(name)}`;
    return this.#expect(200, await this.#send("POST", path, request, call)) as PermitAcquireResponse;
  }

  /** `POST /semaphores/{name}/renew`. */
  async renewPermits(name: string, owner: string, ttlSeconds: number, call?: CallOptions): Promise<PermitView> {
    const path = `/semaphores/${encodeURIComponent(name)}/renew`;
    return this.#expect(200, await this.#send("POST", path, { owner, ttl_seconds: ttlSeconds }, call)) as PermitView;
  }

  /** `DELETE /semaphores/{name}`: the owner's permits, or a session's (`{ session: id }`). */
  async releasePermits(name: string, holder: string | { session: string }, call?: CallOptions): Promise<ReleaseOutcome> {
    return this.#release(`/semaphores/${encodeURIComponent(name)}`, "owner", holder, call);
  }

  /** `POST /elections/{name}/campaign`: `{elected, leader}`. */
  async campaign(name: string, body: CampaignBody, call?: CallOptions): Promise<CampaignResponse> {
    const request: Schemas["CampaignRequest"] = {
      ...(body.session !== undefined ? { session: body.session } : { candidate: body.candidate, ttl_seconds: body.ttlSeconds }),
      ...(body.waitSeconds ? { wait_seconds: body.waitSeconds } : {}),
      ...(body.value !== undefined ? { value: body.value } : {}),
    };
    const path = `/elections/${encodeURIComponent(name)}/campaign`;
    return this.#expect(200, await this.#send("POST", path, request, call)) as CampaignResponse;
  }

  /** `POST /elections/{name}/renew`. */
  async renewLeadership(name: string, candidate: string, ttlSeconds: number, call?: CallOptions): Promise<LeaderView> {
    const path = `/elections/${encodeURIComponent(name)}/renew`;
    return this.#expect(200, await this.#send("POST", path, { candidate, ttl_seconds: ttlSeconds }, call)) as LeaderView;
  }

  /** `DELETE /elections/{name}/leader`: the candidate's office, or a session's (`{ session: id }`). */
  async resign(name: string, holder: string | { session: string }, call?: CallOptions): Promise<ReleaseOutcome> {
    return this.#release(`/elections/${encodeURIComponent(name)}/leader`, "candidate", holder, call);
  }

  /** `POST /sessions`: the opened session. */
  async openSession(body: OpenSessionBody, call?: CallOptions): Promise<SessionView> {
    const request: Schemas["SessionOpenRequest"] = {
      ttl_seconds: body.ttlSeconds,
      ...(body.owner !== undefined ? { owner: body.owner } : {}),
      ...(body.lockDelaySeconds !== undefined ? { lock_delay_seconds: body.lockDelaySeconds } : {}),
    };
    return (this.#expect(201, await this.#send("POST", "/sessions", request, call)) as Schemas["SessionResponse"]).session;
  }

  /**
   * `POST /sessions/{id}/keepalive` (with `ttlSeconds`: the session's TTL from now on): the
   * session with its new `expires_at`. A 404 throws: the session has ended, every hold with it.
   */
  async keepSessionAlive(id: string, ttlSeconds?: number, call?: CallOptions): Promise<SessionView> {
    const body = ttlSeconds === undefined ? undefined : { ttl_seconds: ttlSeconds };
    const answer = await this.#send("POST", `${sessionPath(id)}/keepalive`, body, call);
    return (this.#expect(200, answer) as Schemas["SessionResponse"]).session;
  }

  /** `GET /sessions/{id}`: the session and its live holds, or `null` once it has ended. */
  async getSession(id: string, call?: CallOptions): Promise<SessionHoldsResponse | null> {
    const answer = await this.#send("GET", sessionPath(id), undefined, call);
    if (answer.status === 404) return null;
    return this.#expect(200, answer) as SessionHoldsResponse;
  }

  /** `DELETE /sessions/{id}`: ends it and every hold at once; `true` if it ended now, `false` if it had already. */
  async endSession(id: string, call?: CallOptions): Promise<boolean> {
    const answer = await this.#send("DELETE", sessionPath(id), undefined, call);
    if (answer.status === 404) return false;
    this.#expect(204, answer);
    return true;
  }

  async #release(path: string, holderKey: "owner" | "candidate", holder: string | { session: string }, call?: CallOptions): Promise<ReleaseOutcome> {
    if (typeof holder === "string") return releaseOutcome(await this.#send("DELETE", path, { [holderKey]: holder }, call));
    return releaseOutcome(await this.#send("DELETE", `${path}?session=${encodeURIComponent(holder.session)}`, undefined, call));
  }

  #expect(status: number, answer: Answer): unknown {
    if (answer.status !== status) throw new LockdHttpError(answer.status, answer.body);
    return answer.body;
  }

  async #send(method: string, path: string, body: unknown, call: CallOptions = {}): Promise<Answer> {
    const signals: AbortSignal[] = [];
    if (call.timeoutMs !== undefined) signals.push(AbortSignal.timeout(Math.max(1, Math.floor(call.timeoutMs))));
    if (call.signal) signals.push(call.signal);
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    let status: number;
    let text: string;
    try {
      const response = await this.#fetch(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new OutcomeUnknownError(`${method} ${path}: ${describe(error)}`, { cause: error });
    }
    let parsed: unknown = undefined;
    if (text !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (status >= 500) {
      throw new OutcomeUnknownError(`${method} ${path}: answered ${status}`, {
        cause: new LockdHttpError(status, parsed),
      });
    }
    return { status, body: parsed };
  }
}

/** The request fields that name the holder: an owner and its TTL, or a session. */
function holderFields(holder: Holder): { owner: string; ttl_seconds: number } | { session: string } {
  return holder.session !== undefined ? { session: holder.session } : { owner: holder.owner, ttl_seconds: holder.ttlSeconds };
}

function sessionPath(id: string): string {
  return `/sessions/${encodeURIComponent(id)}`;
}

function lockPath(resource: string): string {
  return `/locks/${encodeURIComponent(resource)}`;
}

function releaseOutcome(answer: Answer): ReleaseOutcome {
  switch (answer.status) {
    case 204:
      return "released";
    case 404:
      return "not_found";
    case 403:
      return "forbidden";
    default:
      throw new LockdHttpError(answer.status, answer.body);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
