// Fails when src/generated/openapi.ts is not what openapi-typescript (the pinned version)
// generates from openapi/openapi.json today: regenerates into a temporary file and compares.
// Fix a failure with `npm run generate` and commit the result. OPENAPI_DOCUMENT names another
// document (the drift test uses it to prove that a changed document fails the check).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(root, 'src/generated/openapi.ts');
const document = process.env.OPENAPI_DOCUMENT ?? '../../openapi/openapi.json';
const dir = mkdtempSync(join(tmpdir(), 'lockd-ts-drift-'));
const fresh = join(dir, 'openapi.ts');
try {
  execFileSync(join(root, 'node_modules/.bin/openapi-typescript'),
    [document, '--output', fresh], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const want = readFileSync(fresh, 'utf8');
  const have = readFileSync(committed, 'utf8');
  if (want !== have) {
    const a = have.split('\n'), b = want.split('\n');
    let line = 0;
    while (line < Math.max(a.length, b.length) && a[line] === b[line]) line++;
    console.error(`drift: src/generated/openapi.ts differs from what openapi/openapi.json generates, ` +
      `first at line ${line + 1}:\n  committed: ${a[line] ?? '(end of file)'}\n  generated: ${b[line] ?? '(end of file)'}\n` +
      `Run \`npm run generate\` in clients/typescript and commit the result.`);
    process.exitCode = 1;
  } else {
    console.log('drift: src/generated/openapi.ts is up to date');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
