// withLock, withPermits and withLeadership against a live lockd, on SQLite and PostgreSQL:
// the happy path, contention with a wait, and no renewal after the release (from the audit log).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { LockdClient, withLock, withPermits, withLeadership, LockHeldError, LeaseLostError, LockdHttpError } from '../dist/index.js';
import { backends, startLockd, sleep, owner } from './lockd.mjs';

for (const backend of backends) {
  describe(`guards on ${backend}`, () => {
    test('withLock: holds, renews, releases', { timeout: 60_000 }, async () => {
      const lockd = await startLockd(backend);
      try {
        const client = new LockdClient(lockd.base);
        const me = owner('happy');
        const result = await withLock(client, 'export:nightly', { ttl: 3, wait: 5, owner: me }, async (lease, signal) => {
          assert.equal(lease.owner, me);
          assert.ok(lease.fencingToken >= 1);
          assert.ok(lease.deadline > performance.now() && lease.deadline <= performance.now() + 3000);
          const first = lease.deadline;
          const status = await client.getLock('export:nightly');
          assert.equal(status.owner, me);
          await sleep(1500); // one renewal at ttl/3
          assert.ok(lease.deadline > first, 'the deadline moved with the renewal');
          assert.equal(signal.aborted, false);
          return 'done';
        });
        assert.equal(result, 'done');
        assert.equal(await client.getLock('export:nightly'), null, 'released');
        await sleep(300); // the audit log is written by a thread of its own
        const mine = lockd.audit().filter((e) => e.owner === me).map((e) => e.event);
        assert.deepEqual(mine, ['granted', 'renewed', 'released']);
      } finally {
        await lockd.stop();
      }
    });

    test('contention: the second waits, gets the lock after the first, with a larger token', { timeout: 60_000 }, async () => {
      const lockd = await startLockd(backend);
      try {
        const client = new LockdClient(lockd.base);
        let firstEnd, firstToken, secondStart, secondToken;
        let held, letGo;
        const holding = new Promise((r) => { held = r; });
        const released = new Promise((r) => { letGo = r; });
        const first = withLock(client, 'r', { ttl: 5 }, async (lease) => {
          firstToken = lease.fencingToken;
          held();
          await released;
          firstEnd = performance.now();
        });
        await holding;
        await assert.rejects(withLock(client, 'r', { ttl: 5 }, () => assert.fail('ran while held')), LockHeldError);
        const started = performance.now();
        await assert.rejects(withLock(client, 'r', { ttl: 5, wait: 1 }, () => assert.fail('ran while held')),
          (error) => error instanceof LockHeldError && error.waitSeconds === 1);
        assert.ok(performance.now() - started >= 900, 'waited about a second');
        const second = withLock(client, 'r', { ttl: 5, wait: 10 }, async (lease) => {
          secondStart = performance.now();
          secondToken = lease.fencingToken;
        });
        await sleep(300);
        letGo();
        await second;
        await first;
        assert.ok(secondStart >= firstEnd, 'second ran after the first released');
        assert.ok(secondToken > firstToken, `token ${secondToken} > ${firstToken}`);
      } finally {
        await lockd.stop();
      }
    });

    test('a long wait does not eat into the lease: renewed before the work starts', { timeout: 60_000 }, async () => {
      const lockd = await startLockd(backend);
      try {
        const client = new LockdClient(lockd.base);
        const me = owner('long-wait');
        let held;
        const holding = new Promise((r) => { held = r; });
        const first = withLock(client, 'w', { ttl: 10 }, () => { held(); return sleep(2500); });
        await holding;
        await withLock(client, 'w', { ttl: 3, wait: 10, owner: me }, async (lease, signal) => {
          assert.ok(lease.deadline - performance.now() > 2500, `a fresh deadline: ${lease.deadline - performance.now()} ms`);
          await sleep(1500);
          assert.equal(signal.aborted, false);
        });
        await first;
        await sleep(300);
        const mine = lockd.audit().filter((e) => e.owner === me).map((e) => e.event);
        assert.deepEqual(mine.slice(0, 2), ['granted', 'renewed'], `${mine}`);
      } finally {
        await lockd.stop();
      }
    });

    test('a lease taken away (force-released) aborts the signal at the next renewal (404)', { timeout: 60_000 }, async () => {
      const lockd = await startLockd(backend);
      try {
        const client = new LockdClient(lockd.base);
        let reason, abortedAfterMs;
        await assert.rejects(withLock(client, 'taken', { ttl: 3 }, async (lease, signal) => {
          const forced = await fetch(`${lockd.base}/locks/taken?force=true&reason=test`, { method: 'DELETE' });
          assert.equal(forced.status, 200, await forced.text());
          const at = performance.now();
          await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
          abortedAfterMs = performance.now() - at;
          reason = signal.reason;
        }), (error) => error === reason);
        assert.ok(reason instanceof LeaseLostError);
        assert.ok(reason.cause instanceof LockdHttpError && reason.cause.status === 404, `${reason.cause}`);
        assert.ok(abortedAfterMs < 1500, `aborted at the first renewal (${abortedAfterMs} ms)`);
      } finally {
        await lockd.stop();
      }
    });

    test('no renewal is sent after the release (audit log)', { timeout: 60_000 }, async () => {
      const lockd = await startLockd(backend);
      try {
        const client = new LockdClient(lockd.base);
        // Release right around the moment a renewal is due (ttl/3 = 1 s), several times.
        const owners = [];
        for (const hold of [400, 990, 1000, 1005, 1020, 2010]) {
          const me = owner(`release-${hold}`);
          owners.push(me);
          await withLock(client, `race-${hold}`, { ttl: 3, owner: me }, () => sleep(hold));
        }
        await sleep(1500); // longer than a renewal period: a stray renewal would show by now
        const events = lockd.audit();
        for (const me of owners) {
          const mine = events.filter((e) => e.owner === me).map((e) => e.event);
          const released = mine.indexOf('released');
          assert.ok(released > 0, `${me}: released: ${mine}`);
          assert.deepEqual(mine.slice(released + 1), [], `${me}: nothing after the release: ${mine}`);
          assert.ok(!mine.includes('renew_not_found'), `${me}: ${mine}`);
        }
        const renewedBefore = owners.filter((me) => events.some((e) => e.owner === me && e.event === 'renewed'));
        assert.ok(renewedBefore.length >= 2, `renewals happened before the releases: ${renewedBefore}`);
      } finally {
        await lockd.stop();
      }
    });

    test('withPermits and withLeadership', { timeout: 60_000 }, async () => {
      const lockd = await startLockd(backend);
      try {
        const client = new LockdClient(lockd.base);
        const options = { ttl: 5, limit: 2 };
        await withPermits(client, 'exports', options, async (a) => {
          await withPermits(client, 'exports', options, async (b) => {
            assert.ok(b.fencingToken > a.fencingToken);
            await assert.rejects(withPermits(client, 'exports', options, () => assert.fail('over the limit')), LockHeldError);
          });
          await withPermits(client, 'exports', options, async () => {}); // a permit is free again
        });
        let term;
        await withLeadership(client, 'scheduler', { ttl: 5, value: { at: 'node-a' } }, async (lease) => {
          term = lease.fencingToken;
          await assert.rejects(withLeadership(client, 'scheduler', { ttl: 5 }, () => assert.fail('two leaders')), LockHeldError);
        });
        await withLeadership(client, 'scheduler', { ttl: 5 }, async (lease) => {
          assert.ok(lease.fencingToken > term, 'a new term');
        });
        await sleep(300); // the audit log is written by a thread of its own
        const events = lockd.audit().map((e) => e.event);
        assert.equal(events.filter((e) => e === 'released').length, 3, `${events}`);
        assert.equal(events.filter((e) => e === 'resigned').length, 2, `${events}`);
      } finally {
        await lockd.stop();
      }
    });
  });
}
