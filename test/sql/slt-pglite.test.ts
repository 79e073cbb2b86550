import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailures, PgliteEngine, runSltFile } from './runner/index.js';
import { sltFiles } from './slt-files.js';

/**
 * Every test/sql/*.slt file must pass 100% on real PostgreSQL (PGlite): that is what makes its
 * expected results PostgreSQL's. It also checks each result prints the same when it comes from
 * svcdb as JSON (runner/portability.ts), so the files mean the same thing over HTTP.
 */
describe('test/sql/*.slt on PostgreSQL (PGlite)', () => {
  let engine: PgliteEngine;
  beforeAll(async () => {
    engine = await PgliteEngine.create();
  });
  afterAll(async () => {
    await engine?.close();
  });

  const files = sltFiles();
  it('finds the .slt files', () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
  });

  for (const [name, file] of files) {
    it(`${name} passes on PGlite`, async () => {
      await engine.reset();
      const report = await runSltFile(file, engine, { checkPortability: true }, path.join('test/sql', name));
      if (report.failures.length > 0) expect.fail(describeFailures(report));
      expect(report.passed).toBeGreaterThan(0);
    });
  }
});
