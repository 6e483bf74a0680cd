// withSession and Session against a live lockd, on SQLite and PostgreSQL: holds of every kind
// under one session, kept beyond the TTL by keepalives; jeopardy raised and cleared; the signal
// aborted before the session's end when lockd is unreachable, and at the next keepalive when the
// session is ended elsewhere; the session ended, every hold freed, when the work settles.
// Every wait is for an event, with a generous timeout.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  LockdClient, LockHeldError, LockdHttpError, OutcomeUnknownError, Session, SessionLostError, withLock, withSession,
} from '../dist/index.js';
import { backends, startLockd, sleep } from './lockd.mjs';
import { startProxy } from './proxy.mjs';

async function waitFor(predicate, timeoutMs, what) {
  const end = performance.now() + timeoutMs;
  while (!(await predicate())) {
    assert.ok(performance.now() < end, `timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

const aborted = (signal) => new Promise((resolve) => {
  if (signal.aborted) resolve();
  else signal.addEventListener('abort', resolve, { once: true });
});

/** The session's live holds as `kind name`, sorted, as lockd says; null once it has ended. */
async function holdsOf(lockd, id) {
  const answer = await fetch(`${lockd.base}/sessions/${id}`);
  if (answer.status === 404) return null;
  assert.equal(answer.status, 200);
  return (await answer.json()).holds.map((h) => `${h.kind} ${h.name}`).sort();
}

const everything = ['election scheduler', 'lock account:1', 'lock account:2', 'lock catalog', 'lock report', 'semaphore exports'];

async function takeEverything(session) {
  return {
    report: await session.lock('report'),
    catalog: await session.lock('catalog', { mode: 'shared' }),
    accounts: await session.locks(['account:1', { resource: 'account:2', mode: 'shared' }]),
    exports: await session.permits('exports', { limit: 3, permits: 2 }),
    scheduler: await session.campaign('scheduler', { value: { address: '10.0.0.7' } }),
  };
}

async function assertAllFree(lockd) {
  for (const path of ['locks/report', 'locks/catalog', 'locks/account:1', 'locks/account:2', 'semaphores/exports', 'elections/scheduler']) {
    assert.equal((await fetch(`${lockd.base}/${path}`)).status, 404, path);
  }
}

async function withLockd(backend, body) {
  const lockd = await startLockd(backend);
  try {
    await body(lockd);
  } finally {
    await lockd.stop();
  }
}

for (const backend of backends) {
  describe(`sessions on ${backend}`, () => {
    test('holds of every kind under one session; one released alone; all ended with it', { timeout: 60_000 }, () => withLockd(backend, async (lockd) => {
      const client = new LockdClient(lockd.base);
      let id;
      const result = await withSession(client, { ttl: 30, owner: 'nightly' }, async (session, signal) => {
        id = session.id;
        assert.equal(session.owner, 'nightly');
        const held = await takeEverything(session);
        assert.deepEqual(await holdsOf(lockd, id), everything);
        const report = await client.getLock('report');
        assert.equal(report.owner, 'nightly');
        assert.equal(report.session, id);
        assert.equal(report.fencing_token, held.report.fencingToken);
        assert.equal(held.report.mode, 'exclusive');
        assert.equal(held.catalog.mode, 'shared');
        assert.deepEqual(held.accounts.map((h) => [h.name, h.mode]), [['account:1', 'exclusive'], ['account:2', 'shared']]);
        assert.equal(held.exports.permits, 2);
        const leader = await (await fetch(`${lockd.base}/elections/scheduler`)).json();
        assert.equal(leader.candidate, 'nightly');
        assert.equal(leader.term, held.scheduler.fencingToken);

        // Another holder is kept out: a lease of its own, or another session.
        await assert.rejects(withLock(client, 'report', { ttl: 5 }, () => assert.fail('two holders')), LockHeldError);
        await withSession(client, { ttl: 5 }, async (other) => {
          await assert.rejects(other.locks(['account:1', 'account:3']), (e) => e instanceof LockHeldError && e.resource === 'account:1, account:3');
          await assert.rejects(other.campaign('scheduler'), LockHeldError);
          const reader = await other.lock('catalog', { mode: 'shared' }); // readers share
          assert.ok(reader.fencingToken > held.catalog.fencingToken);
        });

        assert.equal(await session.release(held.report), true);
        assert.equal(await session.release(held.report), false, 'nothing left to release');
        assert.equal(await client.getLock('report'), null);
        assert.deepEqual(await holdsOf(lockd, id), everything.filter((h) => h !== 'lock report'));
        assert.equal(signal.aborted, false);
        return 'done';
      });
      assert.equal(result, 'done');
      assert.equal(await holdsOf(lockd, id), null, 'the session ended');
      assert.equal(await client.getSession(id), null);
      await assertAllFree(lockd);
    }));

    test('keepalives keep every hold beyond the TTL', { timeout: 60_000 }, () => withLockd(backend, async (lockd) => {
      const client = new LockdClient(lockd.base);
      await withSession(client, { ttl: 3 }, async (session, signal) => {
        const held = await takeEverything(session);
        const firstEnd = session.expiresAt;
        const firstDeadline = session.deadline;
        await sleep(7000); // more than twice the TTL: only keepalives (every 1 s) keep them
        assert.equal(signal.aborted, false);
        assert.deepEqual(await holdsOf(lockd, session.id), everything);
        assert.ok(Date.parse(session.expiresAt) > Date.parse(firstEnd), `${session.expiresAt} > ${firstEnd}`);
        assert.ok(session.deadline > firstDeadline);
        assert.equal((await client.getLock('report')).fencing_token, held.report.fencingToken);
        const seen = await client.getSession(session.id);
        assert.equal(seen.session.expires_at >= firstEnd, true);
      });
      await assertAllFree(lockd);
    }));

    test('jeopardy: raised at the first failed keepalive, cleared at the next that gets through', { timeout: 60_000 }, () => withLockd(backend, async (lockd) => {
      const proxy = await startProxy(lockd.base);
      try {
        const events = [];
        let safe;
        const safeAgain = new Promise((r) => { safe = r; });
        await withSession(new LockdClient(proxy.base), {
          ttl: 6, // a keepalive every 2 s, retried every 600 ms, lost 1.2 s before the deadline
          onJeopardy: (session) => {
            events.push(['jeopardy', session.inJeopardy]);
            proxy.restore(); // lockd is reachable again for the retry
          },
          onSafe: (session) => {
            events.push(['safe', session.inJeopardy]);
            safe();
          },
        }, async (session, signal) => {
          await session.lock('report');
          proxy.cut();
          await Promise.race([safeAgain, sleep(30_000)]);
          assert.deepEqual(events, [['jeopardy', true], ['safe', false]]);
          assert.equal(signal.aborted, false);
          assert.equal((await new LockdClient(lockd.base).getLock('report')).session, session.id);
        });
        await assertAllFree(lockd);
      } finally {
        await proxy.close();
      }
    }));

    test('lockd unreachable: jeopardy, then the signal aborts before the session can end', { timeout: 60_000 }, async (t) => withLockd(backend, async (lockd) => {
      const proxy = await startProxy(lockd.base);
      try {
        const ttl = 3; // margin min(ttl/5, 2 s) = 600 ms
        let jeopardyAt, id, measured;
        const outcome = withSession(new LockdClient(proxy.base), { ttl, onJeopardy: () => { jeopardyAt ??= performance.now(); } }, async (session, signal) => {
          id = session.id;
          await session.lock('report');
          const opened = session.expiresAt;
          await waitFor(() => session.expiresAt !== opened, 15_000, 'a keepalive');
          proxy.cut();
          const cutAt = performance.now();
          await Promise.race([aborted(signal), sleep(ttl * 1000 + 15_000)]);
          assert.ok(signal.aborted, 'the signal was never aborted');
          const now = performance.now();
          measured = {
            beforeExpiresMs: Date.parse(session.expiresAt) - Date.now(),
            beforeDeadlineMs: session.deadline - now,
            afterCutMs: now - cutAt,
            jeopardyAfterCutMs: jeopardyAt - cutAt,
            reason: signal.reason,
          };
          assert.ok(jeopardyAt !== undefined && jeopardyAt <= now, 'jeopardy came first');
          await assert.rejects(session.lock('another'), (e) => e === signal.reason);
          return 'finished';
        });
        await assert.rejects(outcome, (error) => error === measured.reason && error instanceof SessionLostError);
        t.diagnostic(`cut off: jeopardy ${measured.jeopardyAfterCutMs.toFixed(0)} ms and abort ${measured.afterCutMs.toFixed(0)} ms ` +
          `after the cut, ${measured.beforeExpiresMs} ms before expires_at, ${measured.beforeDeadlineMs.toFixed(0)} ms before the deadline`);
        assert.ok(measured.beforeExpiresMs > 0, `aborted before expires_at (${measured.beforeExpiresMs} ms)`);
        assert.ok(measured.beforeDeadlineMs > 0, `aborted before the deadline (${measured.beforeDeadlineMs} ms)`);
        // Ending it could not reach lockd either: it runs out by itself, with its hold.
        await waitFor(async () => (await holdsOf(lockd, id)) === null, ttl * 1000 + 15_000, 'the session to run out');
        assert.equal(await new LockdClient(lockd.base).getLock('report'), null);
      } finally {
        await proxy.close();
      }
    }));

    test('the session ended elsewhere: the signal aborts at the next keepalive (404)', { timeout: 60_000 }, () => withLockd(backend, async (lockd) => {
      const client = new LockdClient(lockd.base);
      let reason;
      await assert.rejects(withSession(client, { ttl: 3 }, async (session, signal) => {
        await session.lock('report');
        assert.equal(await new LockdClient(lockd.base).endSession(session.id), true);
        assert.equal(await client.getLock('report'), null, 'freed with the session');
        await Promise.race([aborted(signal), sleep(15_000)]);
        reason = signal.reason;
        assert.equal(session.inJeopardy, false);
      }), (error) => error === reason);
      assert.ok(reason instanceof SessionLostError, `${reason}`);
      assert.ok(reason.cause instanceof LockdHttpError && reason.cause.status === 404, `${reason.cause}`);
    }));

    test('an acquire that finds the session ended loses it', { timeout: 60_000 }, () => withLockd(backend, async (lockd) => {
      const client = new LockdClient(lockd.base);
      const session = await Session.open(client, { ttl: 60 }); // no keepalive due for 20 s
      try {
        assert.equal(await client.endSession(session.id), true);
        await assert.rejects(session.permits('exports', { limit: 2 }), SessionLostError);
        assert.ok(session.signal.aborted && session.lost instanceof SessionLostError);
      } finally {
        await session.close();
      }
      assert.equal((await fetch(`${lockd.base}/semaphores/exports`)).status, 404);
    }));

    test('work that throws: the session is ended and every hold freed', { timeout: 60_000 }, () => withLockd(backend, async (lockd) => {
      const client = new LockdClient(lockd.base);
      let id;
      await assert.rejects(withSession(client, { ttl: 30 }, async (session) => {
        id = session.id;
        await takeEverything(session);
        throw new Error('the work failed');
      }), /the work failed/);
      assert.equal(await holdsOf(lockd, id), null);
      await assertAllFree(lockd);
    }));

    test('an acquire of unknown outcome under a session is released, a re-grant is not', { timeout: 60_000 }, () => withLockd(backend, async (lockd) => {
      // A fetch that lets lockd answer a POST to `spoiled`, then loses the answer (once).
      let spoiled = '/locks/orphan';
      const losing = async (url, init) => {
        const response = await fetch(url, init);
        if (spoiled && init?.method === 'POST' && String(url).endsWith(spoiled)) {
          spoiled = null;
          await response.text();
          throw new TypeError('fetch failed (the answer was lost by the test)');
        }
        return response;
      };
      const direct = new LockdClient(lockd.base);
      await withSession(new LockdClient({ baseUrl: lockd.base, fetch: losing }), { ttl: 30 }, async (session) => {
        const kept = await session.lock('kept');
        await assert.rejects(session.lock('orphan'), OutcomeUnknownError);
        assert.equal(spoiled, null, 'the fault hit the acquire');
        assert.equal(await direct.getLock('orphan'), null, 'released');
        assert.deepEqual(await holdsOf(lockd, session.id), ['lock kept']);
        // Acquiring what the session holds is at most a re-grant: nothing is released.
        spoiled = '/locks/kept';
        await assert.rejects(session.lock('kept'), OutcomeUnknownError);
        assert.equal((await direct.getLock('kept')).fencing_token, kept.fencingToken, 'still held');
      });
      assert.equal(await direct.getLock('kept'), null);
    }));
  });
}
