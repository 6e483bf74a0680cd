// Starts a real lockd (target/debug/lockd) for one test, on SQLite (a temp file) or PostgreSQL
// (a database of its own, dropped afterwards), with the audit log in JSON on stderr.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The lockd the tests start: LOCKD_BINARY, else the debug build (`cargo build -p lockd`). */
export const lockdBinary = process.env.LOCKD_BINARY || join(repo, 'target/debug/lockd');
// The PostgreSQL the Rust tests use (scripts/ensure-postgres); each test makes a database there.
export const adminUrl = new URL(process.env.LOCKD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const databaseUrl = (name) => Object.assign(new URL(adminUrl), { pathname: `/${name}` }).href;

/** The backends to run every test on: LOCKD_TS_BACKENDS (default `sqlite,postgres`). */
export const backends = (process.env.LOCKD_TS_BACKENDS || 'sqlite,postgres').split(',');

function psql(sql) {
  execFileSync('psql', [adminUrl.href, '-v', 'ON_ERROR_STOP=1', '-qc', sql], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * Starts lockd on `backend`; resolves to { base, pid, audit(), kill(signal), stop() }.
 * `audit()` gives the `lockd::audit` events seen so far, each `{ at, event, owner, ... }`.
 */
export async function startLockd(backend) {
  let url, cleanup;
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'lockd-ts-'));
    url = `sqlite://${dir}/locks.db`;
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  } else if (backend === 'postgres') {
    const db = `lockd_ts_${randomBytes(6).toString('hex')}`;
    psql(`CREATE DATABASE ${db}`);
    url = databaseUrl(db);
    cleanup = () => psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  } else {
    throw new Error(`unknown backend ${backend}`);
  }
  const env = { ...process.env, LOCKD_LOG: 'warn,lockd::audit=info', LOCKD_LOG_FORMAT: 'json' };
  delete env.DATABASE_URL;
  delete env.RUST_LOG;
  const child = spawn(lockdBinary, ['serve', '--bind', '127.0.0.1:0', '--database-url', url],
    { stdio: ['ignore', 'ignore', 'pipe'], env });
  const events = [];
  const other = [];
  let exited = false;
  const exit = new Promise((resolveExit) => child.on('exit', () => { exited = true; resolveExit(); }));
  const base = await new Promise((resolveBase, reject) => {
    const timer = setTimeout(() => reject(new Error(`lockd did not start: ${other.join('\n')}`)), 30_000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`lockd exited (${code}): ${other.join('\n')}`)); });
    createInterface({ input: child.stderr }).on('line', (line) => {
      const listening = line.match(/listening on (http:\/\/\S+)/);
      if (listening) { clearTimeout(timer); resolveBase(listening[1]); return; }
      try {
        const parsed = JSON.parse(line);
        if (parsed.target === 'lockd::audit') { events.push({ at: parsed.timestamp, ...parsed.fields }); return; }
      } catch { /* not JSON */ }
      other.push(line);
    });
  });
  return {
    base,
    pid: child.pid,
    audit: () => [...events],
    log: () => [...other],
    kill: (signal) => child.kill(signal),
    async stop() {
      if (!exited) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(timer);
      }
      cleanup();
    },
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** An owner string unique to this test. */
export const owner = (what) => `ts-${what}-${randomBytes(4).toString('hex')}`;
