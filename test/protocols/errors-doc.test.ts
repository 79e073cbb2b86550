import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, SvcError, type ErrorCode } from '../../core/errors.js';
import { HTTP_STATUS_BY_CODE, restEnvelope, type ErrorEnvelopeHook } from '../../protocols/errors.js';
import { collectionEnvelope } from '../../protocols/http/collections/collection-errors.js';
import { vectorEnvelope } from '../../protocols/pinecone/errors.js';

/**
 * Every protocol's envelope hook, by the name docs/errors.md tags its example with. A protocol
 * that adds an envelope (GraphQL's `extensions.code`) adds it here and its example there.
 */
const ENVELOPES: Readonly<Record<string, ErrorEnvelopeHook>> = { rest: restEnvelope, vector: vectorEnvelope, collections: collectionEnvelope };

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

/** The JSON block after each `<!-- envelope: name -->` marker of docs/errors.md. */
function documentedEnvelopes(): Map<string, unknown> {
  const blocks = new Map<string, unknown>();
  const text = readFileSync('docs/errors.md', 'utf8');
  for (const match of text.matchAll(/<!-- envelope: ([a-z]+) -->\s*```json\n([\s\S]*?)\n```/g)) {
    blocks.set(match[1]!, JSON.parse(match[2]!));
  }
  return blocks;
}

describe('docs/errors.md', () => {
  it('lists exactly the codes of core/errors.ts with the status of protocols/errors.ts', () => {
    const documented = documentedStatuses();
    expect([...documented.keys()].sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) expect(documented.get(code), code).toBe(HTTP_STATUS_BY_CODE[code]);
  });

  it('shows the envelope of every protocol exactly as its hook builds it', () => {
    const documented = documentedEnvelopes();
    expect([...documented.keys()].sort()).toEqual(Object.keys(ENVELOPES).sort());
    const error = new SvcError('TABLE_NOT_FOUND', 'table "orders" does not exist', { table: 'orders' });
    const answer = { requestId: '01JD8X0Q7W3T9V4M2B5N6C8E1F', status: HTTP_STATUS_BY_CODE.TABLE_NOT_FOUND };
    for (const [name, envelope] of Object.entries(ENVELOPES)) expect(documented.get(name), name).toEqual(envelope(error, answer));
  });
});

describe('docs/*.md of every protocol', () => {
  it('pairs a status with a code (`404 TABLE_NOT_FOUND`) only as the one table does', () => {
    const known = new Set<string>(ERROR_CODES);
    const pairs: string[] = [];
    for (const file of readdirSync('docs').filter((name) => name.endsWith('.md'))) {
      const text = readFileSync(`docs/${file}`, 'utf8');
      for (const match of text.matchAll(/\b([1-5]\d\d)`? `?([A-Z][A-Z_]{3,})\b/g)) {
        const [, status, code] = match as unknown as [string, string, string];
        pairs.push(`${file}: ${status} ${code}`);
        expect(known.has(code), `${file}: ${code} is not a code of core/errors.ts`).toBe(true);
        expect(Number(status), `${file}: ${status} ${code}`).toBe(HTTP_STATUS_BY_CODE[code as ErrorCode]);
      }
    }
    // The check reads something: the REST, vector, collection, webhook and table docs all name statuses.
    expect(pairs.length).toBeGreaterThan(20);
  });
});
