// The dashboard at /ui/, served by lockd, in a real browser: headless Chromium (Debian's
// /usr/bin/chromium) driven by playwright-core. lockd runs with two keys of one tenant, an
// admin key and a plain one; locks, permits and leaders are taken and released with fetch(), as
// curl would, and the page must follow. Fails if the page requests anything from another host.
// The same tests run once per backend: SQLite (a temp file) and PostgreSQL (a database of its
// own on LOCKD_TEST_DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432/test,
// created with psql and dropped after; an unreachable server is a failure, never a skip).
// LOCKD_BROWSER_BACKENDS=sqlite (or postgres) runs one of them.
// Screenshots of every step go to target/dashboard-test/BACKEND/NN-step.png; the ones for the
// README are target/dashboard-test/BACKEND/dashboard.png and dashboard-phone.png.
//
// Run by tests/browser/run (make e2e), which installs chromium and playwright-core first.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const lockdBinary = process.env.LOCKD_BINARY ?? join(repo, 'target/debug/lockd');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ADMIN_KEY = 'dashboard-admin-key-7f3a';
const PLAIN_KEY = 'dashboard-plain-key-91c2';
// A '/' to encode in paths, markup that must stay text.
const RESOURCE = 'report:<i>nightly</i>/eu';
const OWNER = 'batch-7';
const REASON = 'stuck after deploy 42';
const PAYMENT_VALUE = { order: 42, region: 'eu-west' };
const EXPORT_VALUE = { batch: 12 };
const LEADER_VALUE = { address: '10.0.0.7:8080' };

// The PostgreSQL server of the PostgreSQL tests (scripts/ensure-postgres).
const adminUrl = new URL(process.env.LOCKD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const backends = (process.env.LOCKD_BROWSER_BACKENDS ?? 'sqlite,postgres').split(',');

// One backend's run at a time: before() of each backend starts these afresh.
let lockd, dataDir, dropDatabase, shots, base, browser, context, page, shot;
// The leases taken in step 6, for the checks after it.
let held;
const requests = [];
const pageErrors = [];
const securityErrors = [];

/** Runs `sql` on the PostgreSQL server; throws, saying why, when it cannot. */
function psql(sql) {
  try {
    execFileSync('psql', [adminUrl.href, '-v', 'ON_ERROR_STOP=1', '-qc', sql], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new Error(`psql ${adminUrl.href} -c '${sql}' failed (scripts/ensure-postgres starts PostgreSQL): `
      + `${error.stderr?.toString().trim() || error.message}`);
  }
}

/** A fresh, empty database on `backend`: its URL; dropDatabase() removes a PostgreSQL one. */
function freshDatabase(backend) {
  if (backend === 'sqlite') return `sqlite://${dataDir}/locks.db`;
  if (backend !== 'postgres') throw new Error(`unknown backend ${backend} (sqlite or postgres)`);
  const name = `lockd_dashboard_${randomBytes(6).toString('hex')}`;
  psql(`CREATE DATABASE ${name}`);
  dropDatabase = () => psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  return Object.assign(new URL(adminUrl), { pathname: `/${name}` }).href;
}

/** The keys file: both keys belong to tenant acme; the third column marks the admin key. */
function writeKeysFile() {
  const digest = (key) => createHash('sha256').update(key, 'utf8').digest('hex');
  const path = join(dataDir, 'keys');
  writeFileSync(path, `# tenant  sha256(key)  role\nacme ${digest(ADMIN_KEY)} admin\nacme ${digest(PLAIN_KEY)}\n`);
  return path;
}

/** Starts lockd on a fresh database of `backend` and a free port; resolves to its base URL. */
function startLockd(backend) {
  dataDir = mkdtempSync(join(tmpdir(), 'lockd-dashboard-'));
  const keys = writeKeysFile();
  const databaseUrl = freshDatabase(backend);
  const env = { ...process.env, LOCKD_LOG: 'warn' };
  delete env.DATABASE_URL;
  delete env.RUST_LOG;
  lockd = spawn(lockdBinary, ['serve', '--bind', '127.0.0.1:0', '--api-keys-file', keys,
    '--database-url', databaseUrl], { stdio: ['ignore', 'ignore', 'pipe'], env });
  const seen = [];
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`lockd did not start: ${seen}`)), 30_000);
    lockd.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`lockd exited (${code}): ${seen}`));
    });
    createInterface({ input: lockd.stderr }).on('line', (line) => {
      seen.push(line);
      if (line.startsWith('listening on ')) {
        clearTimeout(timer);
        resolvePromise(line.slice('listening on '.length).trim());
      }
    });
  });
}

async function screenshot(step, options = {}) {
  shot += 1;
  await page.screenshot({ path: join(shots, `${String(shot).padStart(2, '0')}-${step}.png`), ...options });
}

/** A request as curl would send it, with the plain key; `signal` gives up on it. */
async function api(method, path, body, signal) {
  const headers = { Authorization: `Bearer ${PLAIN_KEY}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const answer = await fetch(`${base}${path}`,
    { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  const text = await answer.text();
  return { status: answer.status, body: text ? JSON.parse(text) : null };
}

const lockPath = (resource) => `/locks/${encodeURIComponent(resource)}`;

async function acquire(resource, owner, extra = {}) {
  const answer = await api('POST', lockPath(resource), { owner, ttl_seconds: 60, ...extra });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.acquired, true, JSON.stringify(answer.body));
  return answer.body.lock;
}

/** The row of `kind` `name` in the table of `section` (locks, semaphores, elections). */
function tableRow(section, kind, name) {
  return page.locator(`#${section}-table tbody tr`)
    .filter({ has: page.getByRole('button', { name: `History of ${kind} ${name}`, exact: true }) });
}

/** The locks table's row of `owner` holding `resource`. */
function lockRow(resource, owner) {
  return tableRow('locks', 'lock', resource).filter({ has: page.locator('td.owner', { hasText: owner }) });
}

/** A row's cell under the column headed `column`. */
const cell = (row, column) => row.locator(`td[data-label="${column}"]`);

/** "59.3 s", "4 min 05 s", "1 h 02 min" in seconds. */
function secondsOf(text) {
  const units = { h: 3600, min: 60, s: 1 };
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/([\d.]+)\s*(h|min|s)\b/g)) total += Number(amount) * units[unit];
  assert.ok(/\d/.test(text), `not a remaining time: ${text}`);
  return total;
}

/** Uses `key` through the page's key form. */
async function useKey(key) {
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Use key' }).click();
  await page.waitForFunction((expected) => sessionStorage.getItem('lockd.apiKey') === expected, key);
}

/**
 * Force-releases through the UI: the row's button, a reason, the dialog's confirmation. `act` is
 * what the button and the confirmation say (a session's: 'Force end').
 */
async function forceReleaseThroughPage(row, reason, step, act = 'Force release') {
  await row.getByRole('button', { name: new RegExp(`^${act}`) }).click();
  const dialog = page.locator('#force-dialog');
  await dialog.waitFor({ state: 'visible' });
  assert.equal(await dialog.locator('h2').innerText(), act);
  await dialog.getByLabel(/Reason/).fill(reason);
  await screenshot(`${step}-dialog`);
  await dialog.getByRole('button', { name: act, exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

for (const backend of backends) describe(`the dashboard on ${backend}`, () => {
  before(async () => {
    lockd = dataDir = dropDatabase = browser = held = undefined;
    shot = 0;
    for (const seen of [requests, pageErrors, securityErrors]) seen.length = 0;
    shots = join(repo, 'target/dashboard-test', backend);
    rmSync(shots, { recursive: true, force: true });
    mkdirSync(shots, { recursive: true });
    base = await startLockd(backend);
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    // Every request of the page, its frames and workers, whatever its kind.
    context.on('request', (request) => requests.push(request.url()));
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) securityErrors.push(message.text());
    });
  });

  after(async () => {
    await browser?.close();
    if (lockd && lockd.exitCode === null && lockd.signalCode === null) {
      const exited = new Promise((resolveExit) => lockd.once('exit', resolveExit));
      lockd.kill('SIGKILL');
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    dropDatabase?.();
  });

  test('the dashboard follows locks live and force-releases with an admin key only', async (t) => {
    await t.test('1. the page loads without a key, from lockd alone; the key goes to sessionStorage only', async () => {
      const answer = await fetch(`${base}/ui/`);
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-security-policy'), /default-src 'self'/);
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
      const missing = await fetch(`${base}/ui/nothing.js`);
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('content-type'), 'application/problem+json');

      await page.goto(`${base}/ui/`);
      assert.equal(await page.title(), 'lockd dashboard');
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      // Without a key the server refuses the lists, and the page says why.
      await page.locator('#key-problem[role=alert]', { hasText: '401' }).waitFor({ timeout: 5000 });
      await screenshot('no-key');

      await useKey(PLAIN_KEY);
      await page.locator('#feed-state', { hasText: 'Live' }).waitFor({ timeout: 5000 });
      assert.equal(await page.locator('#key-problem').isHidden(), true);
      const storage = await page.evaluate(() => ({
        session: sessionStorage.getItem('lockd.apiKey'),
        local: localStorage.length,
        cookies: document.cookie,
      }));
      assert.deepEqual(storage, { session: PLAIN_KEY, local: 0, cookies: '' });
      await screenshot('key-in-use');
    });

    await t.test('2. a lock taken with curl appears within 1 s', async () => {
      await acquire(RESOURCE, OWNER);
      const seen = Date.now();
      await lockRow(RESOURCE, OWNER).waitFor({ timeout: 1000 });
      console.log(`lock shown ${Date.now() - seen} ms after the acquire answered`);
      const row = lockRow(RESOURCE, OWNER);
      // The name is text, never markup.
      assert.equal(await row.locator('th').innerText(), RESOURCE);
      assert.equal(await page.locator('#locks-table i').count(), 0);
      await screenshot('lock-shown');
    });

    await t.test('3. its countdown runs', async () => {
      const countdown = lockRow(RESOURCE, OWNER).locator('td.countdown');
      const first = secondsOf(await countdown.innerText());
      await sleep(1500);
      const later = secondsOf(await countdown.innerText());
      assert.ok(first > 55 && first <= 60, `first ${first}`);
      assert.ok(first - later >= 1 && first - later <= 2.5, `from ${first} to ${later}`);
    });

    await t.test('4. a release with curl removes it; "released" shows in the feed and the history', async () => {
      const answer = await api('DELETE', `${lockPath(RESOURCE)}?owner=${OWNER}`);
      assert.equal(answer.status, 204);
      await lockRow(RESOURCE, OWNER).waitFor({ state: 'detached', timeout: 1000 });
      const released = page.locator('#feed-table tbody tr')
        .filter({ has: page.getByRole('button', { name: `History of lock ${RESOURCE}`, exact: true }) })
        .filter({ has: page.locator('td.event', { hasText: /^released$/ }) });
      await released.waitFor({ timeout: 1000 });
      await screenshot('released-in-feed');

      const opener = released.getByRole('button');
      await opener.click();
      const dialog = page.locator('#history-dialog');
      await dialog.waitFor({ state: 'visible' });
      assert.equal(await dialog.locator('h2').innerText(), `History of lock ${RESOURCE}`);
      const events = dialog.locator('tbody td.event');
      await events.first().waitFor();
      assert.deepEqual(await events.allInnerTexts(), ['released', 'granted']);
      await screenshot('history-dialog');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assert.equal(await opener.evaluate((node) => node === document.activeElement), true);
    });

    await t.test('5. force release: refused for the plain key, done for the admin key', async () => {
      await acquire(RESOURCE, OWNER);
      const row = lockRow(RESOURCE, OWNER);
      await row.waitFor({ timeout: 1000 });

      // A reason is required before anything is sent.
      await row.getByRole('button', { name: /^Force release/ }).click();
      const dialog = page.locator('#force-dialog');
      await dialog.getByRole('button', { name: 'Force release', exact: true }).click();
      await dialog.locator('#force-error', { hasText: 'reason' }).waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });

      await forceReleaseThroughPage(row, REASON, 'plain-key');
      // The page says what happened, and the problem's own detail says why.
      await page.locator('#status', { hasText: 'only an admin key may' }).waitFor({ timeout: 5000 });
      assert.match(await page.locator('#status').innerText(), /not an admin key/);
      await screenshot('plain-key-refused');
      const still = await api('GET', lockPath(RESOURCE));
      assert.equal(still.status, 200, JSON.stringify(still.body));
      assert.equal(still.body.owner, OWNER);
      assert.equal(await row.count(), 1);

      await useKey(ADMIN_KEY);
      await row.waitFor({ timeout: 5000 });
      await forceReleaseThroughPage(row, REASON, 'admin-key');
      await page.locator('#status', { hasText: 'Force-released' }).waitFor({ timeout: 5000 });
      assert.match(await page.locator('#status').innerText(), new RegExp(`${OWNER} \\(token \\d+\\)`));
      await row.waitFor({ state: 'detached', timeout: 1000 });
      assert.equal((await api('GET', lockPath(RESOURCE))).status, 404);
      await screenshot('admin-key-released');

      const feedRow = page.locator('#feed-table tbody tr')
        .filter({ has: page.locator('td.event', { hasText: 'force-released' }) });
      await feedRow.waitFor({ timeout: 1000 });
      assert.equal(await feedRow.locator('td.reason').innerText(), REASON);
      await feedRow.getByRole('button', { name: `History of lock ${RESOURCE}`, exact: true }).click();
      const history = page.locator('#history-dialog');
      const newest = history.locator('tbody tr').first();
      await newest.locator('td.event', { hasText: 'force-released' }).waitFor({ timeout: 5000 });
      assert.equal(await newest.locator('td.reason').innerText(), REASON);
      await screenshot('force-released-history');
      await page.keyboard.press('Escape');
      await history.waitFor({ state: 'hidden' });
    });

    await t.test('6. populated, at desktop and at 360 px width without horizontal page scroll', async () => {
      held = { payment: await acquire('payment:42', 'worker-7', { value: PAYMENT_VALUE }), readers: {}, permits: {} };
      for (const reader of ['reader-1', 'reader-2']) held.readers[reader] = await acquire('catalog', reader, { mode: 'shared' });
      for (const [owner, permits] of [['exporter-1', 2], ['exporter-2', 1]]) {
        const answer = await api('POST', '/semaphores/export', { owner, ttl_seconds: 90, limit: 4, permits, value: EXPORT_VALUE });
        assert.equal(answer.body?.acquired, true, JSON.stringify(answer.body));
        held.permits[owner] = answer.body.permit;
      }
      const campaign = await api('POST', '/elections/scheduler/campaign',
        { candidate: 'node-a', ttl_seconds: 45, value: LEADER_VALUE });
      assert.equal(campaign.body?.elected, true, JSON.stringify(campaign.body));
      held.leader = campaign.body.leader;
      await lockRow('catalog', 'reader-2').waitFor({ timeout: 1000 });
      await page.locator('#semaphores-table tbody tr').first().waitFor({ timeout: 1000 });
      await page.locator('#elections-table tbody tr').first().waitFor({ timeout: 5000 });
      // The README's picture, without the focus ring the history dialog left behind.
      await page.evaluate(() => document.activeElement?.blur());
      await page.screenshot({ path: join(shots, 'dashboard.png'), fullPage: true });

      await page.setViewportSize({ width: 360, height: 780 });
      await sleep(300);
      const widths = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
      }));
      assert.ok(widths.scroll <= 360, `the page scrolls sideways: ${JSON.stringify(widths)}`);
      await page.screenshot({ path: join(shots, 'dashboard-phone.png') });
      await screenshot('phone', { fullPage: true });
      await page.setViewportSize({ width: 1280, height: 1000 });
    });

    await t.test('7. the rows show fencing tokens, values, shared readers, a semaphore\'s holders and the leader', async () => {
      const payment = lockRow('payment:42', 'worker-7');
      assert.equal(await cell(payment, 'Mode').innerText(), 'exclusive');
      assert.equal(await cell(payment, 'Fencing token').innerText(), String(held.payment.fencing_token));
      assert.equal(await cell(payment, 'Value').innerText(), JSON.stringify(PAYMENT_VALUE));
      for (const [reader, lock] of Object.entries(held.readers)) {
        const row = lockRow('catalog', reader);
        assert.equal(await cell(row, 'Mode').innerText(), 'shared');
        assert.equal(await cell(row, 'Fencing token').innerText(), String(lock.fencing_token));
      }

      const semaphore = tableRow('semaphores', 'semaphore', 'export');
      assert.equal(await cell(semaphore, 'Permits in use').innerText(), '3 of 4');
      const holders = cell(semaphore, 'Holders').locator('li');
      assert.equal(await holders.count(), 2);
      for (const [owner, permit] of Object.entries(held.permits)) {
        // "exporter-1 · 2 permits · token 7 · 1 min 29 s · {"batch":12}"
        const text = await holders.filter({ has: page.locator('.owner', { hasText: owner }) }).innerText();
        const [name, permits, token, left, value] = text.split(' · ');
        assert.deepEqual([name, permits, token, value],
          [owner, `${permit.permits} ${permit.permits === 1 ? 'permit' : 'permits'}`, `token ${permit.fencing_token}`,
            JSON.stringify(EXPORT_VALUE)], text);
        assert.ok(secondsOf(left) > 30 && secondsOf(left) <= 90, `holder's remaining time: ${text}`);
      }

      const election = tableRow('elections', 'election', 'scheduler');
      assert.equal(await cell(election, 'Leader').innerText(), held.leader.candidate);
      assert.equal(await cell(election, 'Term').innerText(), String(held.leader.term));
      assert.equal(await cell(election, 'Value').innerText(), JSON.stringify(LEADER_VALUE));
      const left = secondsOf(await cell(election, 'Expires in').innerText());
      assert.ok(left > 5 && left <= 45, `leader's remaining time: ${left}`);
    });

    await t.test('8. a waiting acquire, permit request and campaign show as waiting, until they give up', async () => {
      const rows = [lockRow('payment:42', 'worker-7'), tableRow('semaphores', 'semaphore', 'export'),
        tableRow('elections', 'election', 'scheduler')];
      for (const row of rows) assert.equal(await cell(row, 'Waiting').innerText(), '0');
      const giveUp = new AbortController();
      const waits = [
        api('POST', lockPath('payment:42'), { owner: 'worker-8', ttl_seconds: 60, wait_seconds: 30 }, giveUp.signal),
        api('POST', '/semaphores/export',
          { owner: 'exporter-3', ttl_seconds: 90, limit: 4, permits: 2, wait_seconds: 30 }, giveUp.signal),
        api('POST', '/elections/scheduler/campaign', { candidate: 'node-b', ttl_seconds: 45, wait_seconds: 30 }, giveUp.signal),
      ].map((answer) => answer.catch((error) => error));
      try {
        // A waiter records nothing, so no event: the page sees it at its next re-read (every 5 s).
        for (const row of rows) await cell(row, 'Waiting').filter({ hasText: /^1$/ }).waitFor({ timeout: 7000 });
        await screenshot('waiting');
      } finally {
        // Closing the connections takes the waiters out of their queues.
        giveUp.abort();
      }
      for (const answer of await Promise.all(waits)) {
        assert.equal(answer?.name, 'AbortError', `a waiter was answered: ${JSON.stringify(answer)}`);
      }
      for (const row of rows) await cell(row, 'Waiting').filter({ hasText: /^0$/ }).waitFor({ timeout: 7000 });
    });

    await t.test('9. a semaphore\'s and an election\'s own history open from their rows', async () => {
      const byTokenDown = (records) => records.sort((a, b) => b[2] - a[2])
        .map(([event, owner, token]) => [event, owner, String(token)]);
      const subjects = [
        { section: 'semaphores', kind: 'semaphore', name: 'export',
          records: byTokenDown(Object.entries(held.permits).map(([owner, permit]) => ['granted', owner, permit.fencing_token])) },
        { section: 'elections', kind: 'election', name: 'scheduler',
          records: [['granted', held.leader.candidate, String(held.leader.term)]] },
      ];
      const dialog = page.locator('#history-dialog');
      for (const { section, kind, name, records } of subjects) {
        const opener = tableRow(section, kind, name).getByRole('button', { name: `History of ${kind} ${name}`, exact: true });
        await opener.click();
        await dialog.waitFor({ state: 'visible' });
        assert.equal(await dialog.locator('h2').innerText(), `History of ${kind} ${name}`);
        const rows = dialog.locator('tbody tr');
        await rows.nth(records.length - 1).waitFor({ timeout: 5000 });
        const shown = await rows.evaluateAll((trs) => trs.map((tr) => ['Event', 'Owner', 'Token']
          .map((column) => tr.querySelector(`td[data-label="${column}"]`)?.textContent)));
        assert.deepEqual(shown, records);
        await screenshot(`${kind}-history`);
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'hidden' });
        assert.equal(await opener.evaluate((node) => node === document.activeElement), true);
      }
    });

    await t.test('10. a prefix shows only the names starting with it, in every list and the feed', async () => {
      const field = page.getByLabel('Show names starting with');
      const names = (list) => page.locator(`#${list}-table tbody th`).allInnerTexts();
      const feedShowsOnly = (prefix) => page.waitForFunction((wanted) => {
        const shown = [...document.querySelectorAll('#feed-table tbody th')].map((name) => name.textContent);
        return shown.length > 0 && shown.every((name) => name.startsWith(wanted));
      }, prefix, { timeout: 5000 });

      await field.fill('pay');
      await lockRow('catalog', 'reader-1').waitFor({ state: 'detached', timeout: 5000 });
      await page.locator('#semaphores-empty').waitFor({ state: 'visible', timeout: 5000 });
      await page.locator('#elections-empty').waitFor({ state: 'visible', timeout: 5000 });
      await feedShowsOnly('pay');
      assert.deepEqual(await names('locks'), ['payment:42']);
      assert.deepEqual(await names('semaphores'), []);
      assert.deepEqual(await names('elections'), []);
      await screenshot('prefix');

      // A prefix, not a part of the name: "ment" is inside "payment:42" but does not start it.
      await field.fill('ment');
      await page.locator('#locks-empty').waitFor({ state: 'visible', timeout: 5000 });
      await page.locator('#feed-empty').waitFor({ state: 'visible', timeout: 5000 });
      assert.deepEqual(await names('locks'), []);
      assert.deepEqual(await names('feed'), []);

      await field.fill('');
      await lockRow('catalog', 'reader-1').waitFor({ timeout: 5000 });
      await tableRow('semaphores', 'semaphore', 'export').waitFor({ timeout: 5000 });
      await tableRow('elections', 'election', 'scheduler').waitFor({ timeout: 5000 });
      await page.locator('#feed-table tbody th', { hasText: /^catalog$/ }).first().waitFor({ timeout: 5000 });
    });

    await t.test('11. keyboard: Tab reaches the key field and Force release; Escape closes the dialog', async () => {
      await page.reload();
      await lockRow('payment:42', 'worker-7').waitFor({ timeout: 5000 });
      const focused = () => page.evaluate(() => ({
        id: document.activeElement?.id ?? '',
        label: document.activeElement?.getAttribute('aria-label') ?? '',
      }));
      /** Presses Tab (or Shift+Tab) until `wanted(focused)`, at most `most` times. */
      async function tabUntil(wanted, { key = 'Tab', most = 40 } = {}) {
        for (let presses = 0; presses < most; presses += 1) {
          await page.keyboard.press(key);
          const now = await focused();
          if (wanted(now)) return now;
        }
        return focused();
      }

      const keyField = await tabUntil((now) => now.id === 'api-key', { most: 10 });
      assert.equal(keyField.id, 'api-key', 'Tab never reached the key field');
      const opener = await tabUntil((now) => now.label.startsWith('Force release'));
      assert.match(opener.label, /^Force release lock /, 'Tab never reached a Force release button');
      await screenshot('focus-on-force-release');

      await page.keyboard.press('Enter');
      const dialog = page.locator('#force-dialog');
      await dialog.waitFor({ state: 'visible' });
      assert.equal((await focused()).id, 'force-reason');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assert.equal((await focused()).label, opener.label, 'focus did not return to the opener');

      // The row's history opens with Space on its name, and closes with Escape as well.
      const name = await tabUntil((now) => now.label.startsWith('History of'), { key: 'Shift+Tab', most: 5 });
      assert.match(name.label, /^History of lock /);
      await page.keyboard.press('Space');
      await page.locator('#history-dialog').waitFor({ state: 'visible', timeout: 10000 }).catch(async (error) => {
        const listErrors = await page.locator('.section-error, [id$="-error"]').allInnerTexts();
        throw new Error(`Space on "${name.label}" opened no history; focus now on ${JSON.stringify(await focused())}; `
          + `the lists say ${JSON.stringify(listErrors.filter((text) => text))}: ${error.message}`);
      });
      await page.keyboard.press('Escape');
      await page.locator('#history-dialog').waitFor({ state: 'hidden' });
      assert.equal((await focused()).label, name.label, 'focus did not return to the history opener');

      // A dialog's close event runs a task after it closed: focus that a key moved on in between
      // (here, at once) stays where it went.
      await page.keyboard.press('Space');
      await page.locator('#history-dialog').waitFor({ state: 'visible', timeout: 10000 });
      const stayed = await page.evaluate(async () => {
        document.getElementById('history-dialog').close();
        document.getElementById('api-key').focus();
        await new Promise((resolve) => { setTimeout(resolve, 100); });
        return document.activeElement?.id ?? '';
      });
      assert.equal(stayed, 'api-key', 'the closed dialog took focus back from where it had moved');
    });

    await t.test('12. the sessions panel lists live sessions with their holds; only an admin key force-ends one', async () => {
      await useKey(PLAIN_KEY);
      await page.locator('#sessions-empty').waitFor({ state: 'visible', timeout: 5000 });
      const opened = await api('POST', '/sessions', { ttl_seconds: 60, owner: 'worker-9' });
      assert.equal(opened.status, 201, JSON.stringify(opened.body));
      const session = opened.body.session;
      const taken = await api('POST', lockPath('session:lock'), { session: session.id });
      assert.equal(taken.body?.acquired, true, JSON.stringify(taken.body));
      const lock = taken.body.lock;
      const permits = await api('POST', '/semaphores/session-sem', { session: session.id, limit: 3, permits: 2 });
      assert.equal(permits.body?.acquired, true, JSON.stringify(permits.body));
      const permit = permits.body.permit;

      // The grants are events: the panel reads the sessions again within about a second.
      const row = page.locator('#sessions-table tbody tr')
        .filter({ has: page.locator('th', { hasText: session.id }) });
      const holds = cell(row, 'Holds').locator('li');
      await holds.nth(1).waitFor({ timeout: 5000 });
      assert.equal(await cell(row, 'Owner').innerText(), 'worker-9');
      assert.deepEqual(await holds.allInnerTexts(), [
        `lock session:lock · exclusive · token ${lock.fencing_token}`,
        `semaphore session-sem · 2 permits · token ${permit.fencing_token}`,
      ]);
      const left = secondsOf(await cell(row, 'Expires in').innerText());
      assert.ok(left > 50 && left <= 60, `the session's remaining time: ${left}`);
      assert.equal(await page.locator('#sessions-count').innerText(), '(1 session)');
      await screenshot('sessions-panel');

      await forceReleaseThroughPage(row, REASON, 'session-plain-key', 'Force end');
      await page.locator('#status', { hasText: 'only an admin key may force-end' }).waitFor({ timeout: 5000 });
      assert.equal((await api('GET', `/sessions/${session.id}`)).status, 200);
      assert.equal(await row.count(), 1);

      await useKey(ADMIN_KEY);
      await row.waitFor({ timeout: 5000 });
      await forceReleaseThroughPage(row, REASON, 'session-admin-key', 'Force end');
      await page.locator('#status', { hasText: `Force-ended session ${session.id}` }).waitFor({ timeout: 5000 });
      await row.waitFor({ state: 'detached', timeout: 1000 });
      await page.locator('#sessions-empty').waitFor({ state: 'visible' });
      assert.equal((await api('GET', `/sessions/${session.id}`)).status, 404);
      assert.equal((await api('GET', lockPath('session:lock'))).status, 404);
      // Each hold is recorded force-released with the reason.
      for (const name of ['session:lock', 'session-sem']) {
        const feedRow = page.locator('#feed-table tbody tr')
          .filter({ has: page.locator('th', { hasText: new RegExp(`^${name}$`) }) })
          .filter({ has: page.locator('td.event', { hasText: 'force-released' }) });
        await feedRow.waitFor({ timeout: 2000 });
        assert.equal(await feedRow.locator('td.reason').innerText(), REASON);
      }
      await screenshot('session-force-ended');
    });

    await t.test('13. a list that cannot be read for a moment keeps its rows under the error', async () => {
      await lockRow('payment:42', 'worker-7').waitFor({ timeout: 5000 });
      const error = page.locator('#locks-error');
      assert.equal(await error.isVisible(), false);
      // The page's reads of the list answer 503 for a while, as a busy database makes them.
      const unavailable = (route) => route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        headers: { 'Retry-After': '1' },
        body: JSON.stringify({
          type: '/problems/unavailable', title: 'Service Unavailable', status: 503,
          detail: 'the lock database is unavailable',
        }),
      });
      await page.route(/\/locks\?/, unavailable);
      try {
        await error.waitFor({ state: 'visible', timeout: 10000 });
        assert.match(await error.innerText(), /unavailable/i);
        assert.ok(await lockRow('payment:42', 'worker-7').isVisible(), 'the rows read before stay');
        assert.ok(await lockRow('catalog', 'reader-1').isVisible(), 'the rows read before stay');
        await screenshot('list-unavailable');
      } finally {
        await page.unroute(/\/locks\?/, unavailable);
      }
      await error.waitFor({ state: 'hidden', timeout: 10000 });
      assert.ok(await lockRow('payment:42', 'worker-7').isVisible());
    });

    await t.test('every request went to lockd itself, none carried a key in its URL', () => {
      const origin = new URL(base).host;
      const elsewhere = requests.filter((url) => {
        const parsed = new URL(url);
        return !(parsed.protocol === 'data:' || parsed.protocol === 'blob:' || parsed.host === origin);
      });
      assert.ok(requests.length > 10, `requests recorded: ${requests}`);
      assert.deepEqual(elsewhere, [], 'the page loaded these from elsewhere');
      assert.deepEqual(requests.filter((url) => url.includes(PLAIN_KEY) || url.includes(ADMIN_KEY)), []);
      assert.deepEqual(pageErrors, [], 'uncaught errors in the page');
      assert.deepEqual(securityErrors, [], 'the Content-Security-Policy blocked something');
    });
  });
});
