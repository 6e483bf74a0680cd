// The README's example is examples/nightly-export.ts word for word (bar its first comment), and
// it runs as written: compiled by `npm run check-examples` (which `npm test` runs first), against
// a live lockd (LOCKD_URL) and a stand-in warehouse (WAREHOUSE_URL) that records each batch with
// its fencing token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { backends, startLockd } from './lockd.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

test('the README example is examples/nightly-export.ts', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = readme.split('## Example')[1].split('```ts\n')[1].split('```')[0];
  const example = readFileSync(join(root, 'examples/nightly-export.ts'), 'utf8');
  const body = example.split('\n').filter((line, i) => !(i < 2 && line.startsWith('//'))).join('\n');
  assert.equal(block, body);
});

for (const backend of backends) {
  test(`the README example runs as written (${backend})`, { timeout: 60_000 }, async () => {
    const lockd = await startLockd(backend);
    const batches = [];
    const warehouse = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => { body += chunk; });
      req.on('end', () => {
        batches.push({ path: req.url, token: Number(req.headers['x-fencing-token']), ...JSON.parse(body) });
        res.writeHead(201).end();
      });
    });
    await new Promise((ready) => warehouse.listen(0, '127.0.0.1', ready));
    try {
      const { stdout } = await run(process.execPath, [join(root, 'dist-examples/examples/nightly-export.js')], {
        env: { ...process.env, LOCKD_URL: lockd.base, WAREHOUSE_URL: `http://127.0.0.1:${warehouse.address().port}` },
        cwd: root,
      });
      assert.match(stdout, /exported 100 batches/);
      assert.equal(batches.length, 100);
      assert.ok(batches.every((b) => b.path === '/batches' && b.token > 0 && b.token === batches[0].token));
      assert.deepEqual(batches.map((b) => b.batch), [...Array(100).keys()]);
      const status = await fetch(`${lockd.base}/locks/export:nightly`);
      assert.equal(status.status, 404, 'released after the example');
    } finally {
      warehouse.close();
      await lockd.stop();
    }
  });
}
