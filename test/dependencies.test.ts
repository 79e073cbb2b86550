import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * package.json promises `"engines": {"node": ">=20.18"}`: `npm install && npm start` on Node 20.
 * npm only warns (EBADENGINE) when a dependency asks for a newer Node, and some such packages are
 * ESM-only, which Node 20 can `require()` only from 20.19 on: the server would fail to start on
 * an older Node 20. This reads the lock file `npm ci` installs from, so a dependency update that
 * needs Node 22 fails here, not on a user's machine.
 */
interface LockedPackage {
  readonly version?: string;
  readonly dev?: boolean;
  readonly optional?: boolean;
  readonly engines?: { readonly node?: string };
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockedPackage> };
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };

/**
 * The Node 20 releases a user may run: every one package.json admits, from 20.18.1 (undici 7, the
 * HTTP client of the sinks, asks for >= 20.18.1; docs/decisions.md) to the one these tests run on.
 */
const NODE_20_RELEASES = ['20.18.1', '20.19.0', process.version];

function refusing(node: string, which: (p: LockedPackage) => boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && which(p) && p.engines?.node !== undefined && !semver.satisfies(node, p.engines.node))
    .map(([path, p]) => `${path.replace(/^.*node_modules\//, '')}@${p.version} needs node ${p.engines!.node}`);
}

describe('dependencies run on the Node versions package.json promises', () => {
  it('package.json still promises Node 20 (>= 20.18)', () => {
    expect(manifest.engines.node).toBe('>=20.18');
  });

  it.each(NODE_20_RELEASES)('every runtime dependency admits Node %s', (node) => {
    expect(semver.satisfies(node, manifest.engines.node)).toBe(true);
    expect(refusing(node, (p) => p.dev !== true)).toEqual([]);
  });

  it('every development tool admits the Node the tests run on', () => {
    // Optional platform binaries (rolldown's, wasm) are skipped by npm where they do not fit.
    expect(refusing(process.version, (p) => p.dev === true && p.optional !== true)).toEqual([]);
  });
});
