import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openLog } from '../../log/index.js';
import { runUntilKilled } from '../helpers/kill.js';
import { logOptions, makeTempDir, payloadFor, readAll, removeTempDir } from './helpers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The child runs the compiled log (`npm test` builds first).
const appender = path.join(root, 'dist/test/log/crash-appender.js');
const ROUNDS = 5;

/** Runs the appender, SIGKILLs it after writeMs of appending; resolves with the LSNs it acknowledged. */
async function runAndKill(dir: string, writeMs: number): Promise<number[]> {
  return (await runUntilKilled(appender, [dir], writeMs)).map(Number);
}

describe('log crash safety', () => {
  it(`keeps every acknowledged record, intact and in order, across ${ROUNDS} SIGKILLs`, async () => {
    // A missing build fails the test: skipping would hide the crash test.
    if (!existsSync(appender)) throw new Error(`${appender} is missing: run \`npm run build\` first (\`npm test\` does)`);
    const dir = await makeTempDir();
    try {
      let ackedMax = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        const acked = await runAndKill(dir, 30 + Math.floor(Math.random() * 200));
        ackedMax = Math.max(ackedMax, ...acked);
        const log = await openLog(logOptions(dir, { segmentSizeBytesMax: 64 * 1024 }));
        try {
          expect(log.headLsn).toBeGreaterThanOrEqual(ackedMax);
          const entries = await readAll(log);
          expect(entries.map((e) => e.lsn)).toEqual(Array.from({ length: log.headLsn }, (_, i) => i + 1));
          // Payload sizes vary; their bytes are a function of the LSN.
          for (const entry of entries) {
            expect(Buffer.from(entry.payload).equals(payloadFor(entry.lsn, entry.payload.length))).toBe(true);
          }
        } finally {
          await log.close();
        }
      }
      expect(ackedMax).toBeGreaterThan(0);
    } finally {
      await removeTempDir(dir);
    }
  });
});
