import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/sql/ (this folder), where the project's .slt files live. */
export const SQL_TEST_DIR = path.dirname(fileURLToPath(import.meta.url));

/** Every test/sql/*.slt file, sorted, as [name, absolute path]. */
export function sltFiles(): [string, string][] {
  return readdirSync(SQL_TEST_DIR)
    .filter((f) => f.endsWith('.slt'))
    .sort()
    .map((f) => [f, path.join(SQL_TEST_DIR, f)]);
}
