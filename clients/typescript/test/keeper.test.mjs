// LeaseKeeper without a server: a renew function that the test controls, to pin down the order
// of renewals, stop() and the abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseKeeper } from '../dist/keeper.js';
import { LockdHttpError, OutcomeUnknownError, LeaseLostError } from '../dist/errors.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function newLease(ttlSeconds) {
  const now = performance.now();
  return { resource: 'r', owner: 'o', fencingToken: 1, deadline: now + ttlSeconds * 1000, expiresAt: '', ttlSeconds };
}

test('stop() waits for the renewal in flight, and nothing is sent after it', async () => {
  const calls = [];
  let stopped = false;
  const keeper = new LeaseKeeper(newLease(3), async () => {
    calls.push({ afterStop: stopped });
    await sleep(300);
    return { expiresAt: 'later' };
  });
  keeper.start(performance.now() - 950); // the first renewal is due in 50 ms
  await sleep(100); // ... and is in flight now
  const before = performance.now();
  await keeper.stop();
  stopped = true;
  assert.ok(performance.now() - before >= 200, 'stop() awaited the renewal in flight');
  await sleep(1200);
  assert.deepEqual(calls, [{ afterStop: false }]);
  assert.equal(keeper.signal.aborted, false);
});

test('each renewal gets a timeout that ends before the deadline less the margin', async () => {
  const timeouts = [];
  const lease = newLease(2); // margin 400 ms, renewal every 667 ms
  const keeper = new LeaseKeeper(lease, async (call) => {
    timeouts.push({ timeoutMs: call.timeoutMs, left: lease.deadline - 400 - performance.now() });
    throw new OutcomeUnknownError('503');
  }, { retryMs: 200 });
  keeper.start(performance.now());
  await new Promise((r) => keeper.signal.addEventListener('abort', r, { once: true }));
  const left = lease.deadline - performance.now();
  await keeper.stop();
  assert.ok(keeper.signal.reason instanceof LeaseLostError);
  assert.ok(left > 350, `aborted ${left} ms before the deadline`);
  assert.ok(timeouts.length >= 2, `retried: ${timeouts.length}`);
  for (const { timeoutMs, left: budget } of timeouts) assert.ok(timeoutMs <= budget + 1, `${timeoutMs} <= ${budget}`);
});

test('a 404 on renewal aborts at once, with the answer as the cause', async () => {
  const keeper = new LeaseKeeper(newLease(30), async () => { throw new LockdHttpError(404, { status: 404 }); });
  const started = performance.now();
  keeper.start(performance.now() - 10_000); // the first renewal is due now
  await new Promise((r) => keeper.signal.addEventListener('abort', r, { once: true }));
  assert.ok(performance.now() - started < 200);
  assert.equal(keeper.signal.reason.cause.status, 404);
  await keeper.stop();
});

test('hooks: failed at each failed renewal, renewed at each success, the lost error made by lostError', async () => {
  const seen = [];
  let answers = ['fail', 'ok', 'fail', 'gone'];
  class CustomLost extends LeaseLostError {}
  const keeper = new LeaseKeeper(newLease(30), async () => {
    const answer = answers.shift();
    if (answer === 'fail') throw new OutcomeUnknownError('503');
    if (answer === 'gone') throw new LockdHttpError(404, { status: 404 });
    return { expiresAt: 'later' };
  }, { retryMs: 100 }, {
    failed: (error) => seen.push(['failed', error.message]),
    renewed: () => seen.push(['renewed']),
    lostError: (message, cause) => new CustomLost('r', message, { cause }),
  });
  keeper.start(performance.now() - 10_000); // the first renewal is due now
  await new Promise((r) => keeper.signal.addEventListener('abort', r, { once: true }));
  await keeper.stop();
  assert.deepEqual(seen, [['failed', '503'], ['renewed'], ['failed', '503']]);
  assert.ok(keeper.lost instanceof CustomLost && keeper.signal.reason === keeper.lost);
  assert.equal(keeper.lost.cause.status, 404);
});
