import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/sql-server.js';
import { describeFailures, requireQueryRoute, runSltFile, SvcdbHttpEngine } from './runner/index.js';
import { sltFiles } from './slt-files.js';

/**
 * Every test/sql/*.slt file against svcdb: one real server per file (in-process, temp data dir,
 * ephemeral port), the file's records in order over POST /api/v1/query. A failing test lists
 * every mismatching record with file:line, SQL, expected and actual.
 * A missing route (the router's 404 NOT_FOUND on POST /api/v1/query) fails every file, never skips.
 * SLT_ERRORS=any accepts any error for `statement error RE` (as run.mjs does) — for development.
 */
const errorMatching = process.env.SLT_ERRORS === 'any' ? 'any' : 'regex';

describe('test/sql/*.slt on svcdb (HTTP)', () => {
  for (const [name, file] of sltFiles()) {
    it(`${name} passes on svcdb`, async () => {
      const server = await startTestServer();
      try {
        await requireQueryRoute(server.baseUrl, server.apiKey);
        const engine = new SvcdbHttpEngine(server.baseUrl, server.apiKey);
        const report = await runSltFile(file, engine, { errorMatching }, path.join('test/sql', name));
        if (report.failures.length > 0) expect.fail(describeFailures(report));
        expect(report.passed).toBeGreaterThan(0);
      } finally {
        await server.close();
      }
    });
  }
});
