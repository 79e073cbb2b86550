/**
 * Runs every benchmark, one after another (never in parallel: they share 2 cores), each in its
 * own process. Each prints one JSON line on stdout; progress goes to stderr.
 * Usage: npm run bench [-- name ...]
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'log-append',
  'projection-apply',
  'replay',
  'rest-http',
  'vector-hnsw',
  'vector-http',
  'cdc',
  'webhooks',
  'graphql',
  'graphql-subscriptions',
  'hot-paths',
];
const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const selected = wanted.length > 0 ? BENCHES.filter((name) => wanted.includes(name)) : BENCHES;

let failed = 0;
for (const name of selected) {
  process.stderr.write(`== ${name}\n`);
  const result = spawnSync(process.execPath, [path.join(here, `${name}.js`)], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    failed += 1;
    process.stderr.write(`${name} failed with ${result.status ?? result.signal}\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
