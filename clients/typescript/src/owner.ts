/** Owner strings that no other process (or other run of this one) will use. */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/**
 * `host/pid/random`: unique per call. lockd knows a holder by its owner string alone, so two
 * holders must never share one (both would hold the lock). At most 255 characters.
 */
export function defaultOwner(): string {
  const host = hostname().replace(/[^\x21-\x7e]/g, "_").slice(0, 200) || "host";
  return `${host}/${process.pid}/${randomBytes(6).toString("hex")}`;
}
