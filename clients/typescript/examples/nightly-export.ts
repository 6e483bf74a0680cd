// The README's example, word for word: `npm run check-examples` type-checks and compiles it,
// and test/readme.test.mjs runs it against a live lockd and a stand-in warehouse.
import { LockdClient, LeaseLostError, LockHeldError, withLock } from "@lockd/client";

const client = new LockdClient({
  baseUrl: process.env.LOCKD_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.LOCKD_API_KEY,
});
const warehouse = process.env.WAREHOUSE_URL ?? "http://warehouse.internal";

async function writeBatch(batch: number, fencingToken: number, signal: AbortSignal): Promise<void> {
  // Send the token with every write, so the store can refuse a stale holder's writes, and pass
  // the signal on so the write stops when the lease can no longer be counted on.
  const response = await fetch(`${warehouse}/batches`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-fencing-token": String(fencingToken) },
    body: JSON.stringify({ batch }),
    signal,
  });
  if (!response.ok) throw new Error(`warehouse answered ${response.status}`);
}

try {
  const written = await withLock(client, "export:nightly", { ttl: 30, wait: 60 }, async (lease, signal) => {
    let batches = 0;
    for (let batch = 0; batch < 100; batch++) {
      signal.throwIfAborted(); // the lease may be lost: stop before the next write
      await writeBatch(batch, lease.fencingToken, signal);
      batches++;
    }
    return batches;
  });
  console.log(`exported ${written} batches`);
} catch (error) {
  if (error instanceof LockHeldError) {
    console.log("another exporter still holds export:nightly after 60 s; not running");
  } else if (error instanceof LeaseLostError) {
    console.error(`stopped: ${error.message}; batches written so far carry a stale token`);
    process.exitCode = 1;
  } else {
    throw error;
  }
}
