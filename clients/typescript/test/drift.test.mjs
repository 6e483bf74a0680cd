// The drift check itself: it passes on the committed document and fails on a changed one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const check = (env = {}) => spawnSync(process.execPath, ['scripts/check-drift.mjs'],
  { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });

test('the committed types are what openapi/openapi.json generates', () => {
  const run = check();
  assert.equal(run.status, 0, run.stderr);
});

test('a changed document fails the drift check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lockd-ts-drift-test-'));
  try {
    const document = JSON.parse(readFileSync(join(root, '../../openapi/openapi.json'), 'utf8'));
    document.components.schemas.RenewRequest.properties.priority = { type: 'integer' };
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    const run = check({ OPENAPI_DOCUMENT: join(dir, 'openapi.json') });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /differs from what openapi\/openapi\.json generates/);
    assert.match(run.stderr, /priority/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
