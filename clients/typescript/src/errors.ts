/** The errors the client throws; every one is an `instanceof`-checkable class. */

/** An answer from lockd that is not what the operation expects (its problem+json, if any). */
export class LockdHttpError extends Error {
  override readonly name = "LockdHttpError";
  constructor(
    readonly status: number,
    readonly problem: unknown,
    message?: string,
  ) {
    super(message ?? `lockd answered ${status}${problemTitle(problem)}`);
  }
}

/**
 * The outcome of a request is unknown: lockd answered 5xx, or the request timed out or failed
 * on the network. The operation may or may not have happened.
 */
export class OutcomeUnknownError extends Error {
  override readonly name = "OutcomeUnknownError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The lock (or the permits, or the office) stayed held by others until the wait ended. */
export class LockHeldError extends Error {
  override readonly name = "LockHeldError";
  constructor(
    readonly resource: string,
    readonly waitSeconds: number,
  ) {
    super(`${resource} is held by another owner (waited ${waitSeconds} s)`);
  }
}

/**
 * The lease can no longer be counted on: a renewal was refused (404: it ended, 403: another
 * owner holds it), or renewals kept failing until the lease's deadline came near. The guard's
 * signal is aborted with this error before the lease can run out.
 */
export class LeaseLostError extends Error {
  override readonly name: string = "LeaseLostError";
  constructor(
    readonly resource: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`lease on ${resource} lost: ${message}`, options);
  }
}

/**
 * The session can no longer be counted on, nor any hold under it: a keepalive was refused (404:
 * it was closed, forced or ran out), or keepalives kept failing until its deadline came near.
 * `resource` is the session's owner label. A `LeaseLostError`, so code that handles a lost lease
 * handles a lost session too.
 */
export class SessionLostError extends LeaseLostError {
  override readonly name: string = "SessionLostError";
  constructor(session: string, message: string, options?: { cause?: unknown }) {
    super(session, message, options);
    this.message = `session ${session} lost: ${message}`;
  }
}

function problemTitle(problem: unknown): string {
  if (problem && typeof problem === "object") {
    const p = problem as { title?: unknown; detail?: unknown };
    if (typeof p.detail === "string") return `: ${p.detail}`;
    if (typeof p.title === "string") return `: ${p.title}`;
  }
  return "";
}
