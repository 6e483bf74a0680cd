// Swagger UI, served by lockd, in a real browser: headless Chromium (Debian's /usr/bin/chromium)
// driven by playwright-core. Acquires and releases a lock through the UI's "Try it out" and
// reads the answers from the page; fails if the page requests anything from another host.
// Screenshots of every step go to target/swagger-ui-test/NN-step.png.
//
// Run by tests/browser/run (make e2e), which installs chromium and playwright-core first.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const lockdBinary = process.env.LOCKD_BINARY ?? join(repo, 'target/debug/lockd');
const shots = join(repo, 'target/swagger-ui-test');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const RESOURCE = 'report:nightly';
const OWNER = 'swagger-ui';

let lockd, dataDir, base, browser, page, shot = 0;
const requests = [];

/** Starts lockd on a fresh SQLite file and a free port; resolves to its base URL. */
function startLockd() {
  dataDir = mkdtempSync(join(tmpdir(), 'lockd-browser-'));
  const env = { ...process.env, LOCKD_LOG: 'warn' };
  delete env.DATABASE_URL;
  delete env.RUST_LOG;
  lockd = spawn(lockdBinary, ['serve', '--bind', '127.0.0.1:0',
    '--database-url', `sqlite://${dataDir}/locks.db`], { stdio: ['ignore', 'ignore', 'pipe'], env });
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

async function screenshot(step) {
  shot += 1;
  await page.screenshot({ path: join(shots, `${String(shot).padStart(2, '0')}-${step}.png`), fullPage: false });
}

/** Expands an operation, presses "Try it out" and returns the operation's block. */
async function tryOut(operationId, step) {
  const block = page.locator(`#operations-locks-${operationId}`);
  await block.locator('.opblock-summary').first().click();
  await block.locator('.try-out__btn').click();
  await block.scrollIntoViewIfNeeded();
  await screenshot(step);
  return block;
}

/** Presses Execute and returns the live answer's status code and body text. */
async function execute(block, step) {
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 15_000 });
  await block.locator('.live-responses-table').scrollIntoViewIfNeeded();
  await screenshot(step);
  const body = block.locator('.live-responses-table .response-col_description pre').first();
  return {
    status: (await status.innerText()).trim(),
    body: (await body.count()) ? (await body.innerText()).trim() : '',
  };
}

async function lockStatus() {
  const answer = await fetch(`${base}/locks/${encodeURIComponent(RESOURCE)}`);
  return { status: answer.status, body: await answer.json() };
}

before(async () => {
  rmSync(shots, { recursive: true, force: true });
  mkdirSync(shots, { recursive: true });
  base = await startLockd();
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  // Every request of the page, its frames and workers, whatever its kind.
  context.on('request', (request) => requests.push(request.url()));
  page = await context.newPage();
});

after(async () => {
  await browser?.close();
  lockd?.kill('SIGKILL');
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('Swagger UI acquires and releases a lock in Chromium, loading nothing from elsewhere', async (t) => {
  await t.test('the page loads with the lock operations', async () => {
    await page.goto(`${base}/swagger-ui/`);
    await page.locator('#operations-locks-acquireLock').waitFor({ timeout: 20_000 });
    await screenshot('loaded');
    assert.match(await page.locator('.info .title').innerText(), /lockd/);
  });

  await t.test('acquire: Try it out, fill in, Execute, 200 with acquired: true', async () => {
    const block = await tryOut('acquireLock', 'acquire-try-it-out');
    await block.locator('input[placeholder="resource"]').fill(RESOURCE);
    await block.locator('textarea.body-param__text').fill(
      JSON.stringify({ owner: OWNER, ttl_seconds: 300 }, null, 2));
    await screenshot('acquire-filled');
    const answer = await execute(block, 'acquire-answer');
    assert.equal(answer.status, '200');
    const body = JSON.parse(answer.body);
    assert.equal(body.acquired, true);
    assert.equal(body.lock.resource, RESOURCE);
    assert.equal(body.lock.owner, OWNER);
    assert.ok(Number.isInteger(body.lock.fencing_token) && body.lock.fencing_token >= 1);
    // The page's answer is the server's state, not something the page made up.
    const held = await lockStatus();
    assert.equal(held.status, 200);
    assert.equal(held.body.fencing_token, body.lock.fencing_token);
  });

  await t.test('release: Try it out, fill in, Execute, 204 and the lock is gone', async () => {
    const block = await tryOut('releaseLock', 'release-try-it-out');
    await block.locator('input[placeholder="resource"]').fill(RESOURCE);
    await block.locator('input[placeholder="owner"]').fill(OWNER);
    // No body: the owner goes in the query.
    await block.locator('textarea.body-param__text').fill('');
    await screenshot('release-filled');
    const answer = await execute(block, 'release-answer');
    assert.equal(answer.status, '204');
    assert.equal((await lockStatus()).status, 404);
  });

  await t.test('every request went to lockd itself', () => {
    const origin = new URL(base).host;
    const elsewhere = requests.filter((url) => {
      const parsed = new URL(url);
      return !(parsed.protocol === 'data:' || parsed.protocol === 'blob:' || parsed.host === origin);
    });
    assert.ok(requests.length > 3, `requests recorded: ${requests}`);
    assert.deepEqual(elsewhere, [], 'the page loaded these from elsewhere');
  });
});
