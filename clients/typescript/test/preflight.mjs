// Run by `npm test` (its `pretest` script) before anything is built: the tests need a lockd
// binary and, for the PostgreSQL backend, a PostgreSQL that answers. When one is missing, say in
// one line how to get it and fail, instead of failing every test with a longer story.
import { accessSync, constants, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { adminUrl, backends, lockdBinary } from './lockd.mjs';

function fail(message) {
  console.error(`npm test: ${message}`);
  process.exit(1);
}

try {
  accessSync(lockdBinary, constants.X_OK);
  if (!statSync(lockdBinary).isFile()) throw new Error('not a file');
} catch {
  fail(process.env.LOCKD_BINARY
    ? `LOCKD_BINARY=${lockdBinary} is not an executable file: point it at a lockd binary, or unset it and run \`cargo build -p lockd\` at the repository's root`
    : `no lockd binary at ${lockdBinary}: run \`cargo build -p lockd\` at the repository's root, or set LOCKD_BINARY=/path/to/lockd`);
}

if (backends.includes('postgres')) {
  const psql = spawnSync('psql', [adminUrl.href, '-X', '-qtAc', 'SELECT 1'], { stdio: 'ignore', timeout: 10_000 });
  if (psql.status !== 0) {
    const shown = new URL(adminUrl);
    if (shown.password) shown.password = '***';
    fail(psql.error?.code === 'ENOENT'
      ? 'psql is not installed, and the PostgreSQL backend\'s tests use it: install PostgreSQL ' +
        '(scripts/ensure-postgres, as root), or test on SQLite only with LOCKD_TS_BACKENDS=sqlite'
      : `PostgreSQL does not answer at ${shown.href}, and the PostgreSQL backend's tests need it: ` +
        'start one (scripts/ensure-postgres, as root), set LOCKD_TEST_DATABASE_URL, or test on SQLite only with LOCKD_TS_BACKENDS=sqlite');
  }
}
