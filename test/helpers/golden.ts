/**
 * Golden files: a test compares, never writes. A missing golden fails. `npm run golden` sets
 * SVCDB_WRITE_GOLDEN=1 to rewrite them on purpose (review the diff before committing).
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { expect } from 'vitest';

const WRITE = process.env.SVCDB_WRITE_GOLDEN === '1';

/** Asserts that `file` holds exactly `body` (or writes it, under `npm run golden`). */
export async function expectGolden(file: string, body: string): Promise<void> {
  if (WRITE) {
    await writeFile(file, body);
    return;
  }
  if (!existsSync(file)) throw new Error(`golden file ${file} is missing: run \`npm run golden\` to write it, and review it`);
  expect(body).toBe(await readFile(file, 'utf8'));
}
