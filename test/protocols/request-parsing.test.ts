import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { TableDef } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import { presentedKey } from '../../protocols/auth/authenticate.js';
import { idParts } from '../../protocols/http/rows/row-id.js';

/**
 * The per-request parsing of the hot routes has fast paths for the common shapes (a `Bearer <token>`
 * header, a one-column id without escapes); each must answer exactly what the general code answers.
 * The general code is restated here as it was before the fast paths.
 */

function referenceKey(headers: Record<string, string | undefined>): string | null {
  const auth = headers.authorization;
  if (typeof auth === 'string' && auth.trim() !== '') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    return m ? m[1]!.trim() : auth.trim();
  }
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  return null;
}

function referenceParts(names: readonly string[], rawUrl: string): string[] | 'error' {
  const segment = rawUrl.split('?')[0]!.slice(rawUrl.split('?')[0]!.lastIndexOf('/') + 1);
  try {
    const parts = segment.split(',').map((part) => decodeURIComponent(part));
    return parts.length === names.length ? parts : 'error';
  } catch {
    return 'error';
  }
}

/** Latin1 text (what node gives as a header value) rich in white space, commas, escapes and "Bearer". */
const latin1 = fc.string({
  unit: fc.oneof(
    fc.constantFrom(' ', '\t', '\u00a0', '\u0085', ',', '%', '%2C', '%zz', 'Bearer', 'bearer ', '?', '/', 'é'),
    fc.string({ minLength: 1, maxLength: 1 }),
  ),
});

describe('presentedKey', () => {
  it('gives what the regex-and-trim reading gives, for any Authorization / X-API-Key', () => {
    const header = fc.oneof(
      latin1,
      latin1.map((s) => `Bearer ${s}`),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(header, header, (authorization, apiKey) => {
        const headers = { authorization, 'x-api-key': apiKey };
        expect(presentedKey({ headers } as unknown as FastifyRequest)).toBe(referenceKey(headers));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('idParts', () => {
  const table = (keyColumns: number): TableDef =>
    ({
      name: 't',
      primaryKey: Array.from({ length: keyColumns }, (_, i) => i + 1),
      columns: Array.from({ length: keyColumns }, (_, i) => ({ id: i + 1, name: `k${i}` })),
    }) as unknown as TableDef;

  it('gives the general reading for any URL, one key column or two', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 }), latin1, latin1, (columns, id, query) => {
        const url = `/api/v1/tables/t/rows/${id.replaceAll('/', '')}${query.startsWith('?') ? query : ''}`;
        const def = table(columns);
        const expected = referenceParts(
          def.columns.map((c) => c.name),
          url,
        );
        if (expected === 'error') expect(() => idParts(def, url)).toThrow(SvcError);
        else expect(idParts(def, url)).toEqual(expected);
      }),
      { numRuns: 5000 },
    );
  });
});
