// The guard under faults, against a live lockd on SQLite and PostgreSQL: the server killed
// (SIGKILL) or frozen (SIGSTOP) mid-hold aborts the signal before the lease can run out, and an
// acquire of unknown outcome is released.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { LockdClient, withLock, LeaseLostError, OutcomeUnknownError } from '../dist/index.js';
import { backends, startLockd, sleep, owner } from './lockd.mjs';
import { startProxy } from './proxy.mjs';

const TTL = 3; // renewal every 1 s, margin min(ttl/5, 2 s) = 600 ms

/**
 * Holds a lock, applies `fault` to lockd after the first renewal, and measures when the signal
 * aborts: how long before the server's `expires_at` (wall clock) and before `lease.deadline`.
 */
async function holdThrough(t, lockd, fault, afterAbort) {
  const client = new LockdClient({ baseUrl: lockd.base });
  const me = owner(fault);
  let measured;
  const outcome = withLock(client, `fault:${fault}`, { ttl: TTL, owner: me }, async (lease, signal) => {
    await sleep(1300); // one renewal went through
    assert.equal(signal.aborted, false);
    lockd.kill(fault);
    const faultAt = performance.now();
    await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    measured = {
      beforeExpiresMs: Date.parse(lease.expiresAt) - Date.now(),
      beforeDeadlineMs: lease.deadline - performance.now(),
      afterFaultMs: performance.now() - faultAt,
      reason: signal.reason,
    };
    await afterAbort?.();
    return 'finished';
  });
  await assert.rejects(outcome, (error) => error === measured.reason && error instanceof LeaseLostError);
  t.diagnostic(`${fault}: aborted ${measured.beforeExpiresMs} ms before expires_at, ` +
    `${measured.beforeDeadlineMs.toFixed(0)} ms before lease.deadline, ${measured.afterFaultMs.toFixed(0)} ms after the fault`);
  assert.ok(measured.beforeExpiresMs > 0, `aborted before expires_at (${measured.beforeExpiresMs} ms)`);
  assert.ok(measured.beforeDeadlineMs > 0, `aborted before lease.deadline (${measured.beforeDeadlineMs} ms)`);
  return { me, measured };
}

for (const backend of backends) {
  describe(`faults on ${backend}`, () => {
    test('lockd killed (SIGKILL) mid-hold: the signal aborts before the lease can run out', { timeout: 60_000 }, async (t) => {
      const lockd = await startLockd(backend);
      try {
        await holdThrough(t, lockd, 'SIGKILL');
      } finally {
        await lockd.stop();
      }
    });

    test('lockd frozen (SIGSTOP) mid-hold: the signal aborts before the lease can run out', { timeout: 60_000 }, async (t) => {
      const lockd = await startLockd(backend);
      try {
        const { me } = await holdThrough(t, lockd, 'SIGSTOP', () => lockd.kill('SIGCONT'));
        await sleep(300);
        const mine = lockd.audit().filter((e) => e.owner === me).map((e) => e.event);
        assert.equal(mine[0], 'granted');
        assert.ok(mine.includes('released') || mine.includes('release_not_found'), `release sent after SIGCONT: ${mine}`);
      } finally {
        await lockd.stop();
      }
    });

    for (const mode of ['drop', '503']) {
      test(`an acquire of unknown outcome (${mode === 'drop' ? 'connection closed before the answer' : '503 after the grant'}) is released`, { timeout: 60_000 }, async () => {
        const lockd = await startLockd(backend);
        const proxy = await startProxy(lockd.base);
        try {
          const client = new LockdClient(proxy.base);
          const me = owner(`unknown-${mode}`);
          proxy.failNext(mode);
          await assert.rejects(
            withLock(client, 'export:nightly', { ttl: 60, owner: me }, () => assert.fail('ran without knowing')),
            OutcomeUnknownError);
          assert.deepEqual(proxy.faults, [mode], 'the fault hit the acquire');
          await sleep(300);
          const mine = lockd.audit().filter((e) => e.owner === me).map((e) => e.event);
          assert.deepEqual(mine, ['granted', 'released'], 'granted unseen, then released by the same owner');
          assert.equal(await new LockdClient(lockd.base).getLock('export:nightly'), null, 'the lock is free');
        } finally {
          await proxy.close();
          await lockd.stop();
        }
      });
    }
  });
}
