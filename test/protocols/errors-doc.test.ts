import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../core/errors.js';
import { HTTP_STATUS_BY_CODE } from '../../protocols/errors.js';

/** Rows `| CODE | status | when |` of the table in docs/errors.md. */
function documentedStatuses(): Map<string, number> {
  const rows = new Map<string, number>();
  for (const line of readFileSync('docs/errors.md', 'utf8').split('\n')) {
    const match = /^\|\s*`?([A-Z][A-Z_]+)`?\s*\|\s*(\d{3})\s*\|\s*\S/.exec(line);
    if (match) {
      const [, code, status] = match as unknown as [string, string, string];
      expect(rows.has(code), `${code} is listed twice in docs/errors.md`).toBe(false);
      rows.set(code, Number(status));
    }
  }
  return rows;
}

describe('docs/errors.md', () => {
  it('lists exactly the codes of core/errors.ts with the status of protocols/errors.ts', () => {
    const documented = documentedStatuses();
    expect([...documented.keys()].sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) expect(documented.get(code), code).toBe(HTTP_STATUS_BY_CODE[code]);
  });
});
