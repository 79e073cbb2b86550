/**
 * `svcdb replay` swaps the rebuilt state in and deletes the old one: the rebuilt state (with the
 * sinks' carried state, which the log cannot rebuild) must be on disk, and the renames durable,
 * before the old state is removed. The file system calls are observed at node:fs (the OS
 * boundary), not in the rebuild's own code.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { openStateStore, rebuildProjections } from '../../projections/index.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { openLogAt, openStack, tempDir } from '../helpers/stack.js';

type FsPromises = typeof import('node:fs/promises');
const fsPromises = createRequire(import.meta.url)('node:fs/promises') as FsPromises;
const restores: (() => void)[] = [];

afterEach(() => {
  for (const restore of restores.splice(0)) restore();
  syncBuiltinESMExports();
});

/** Records every open → path, FileHandle sync, rename and rm the process makes from now on. */
async function observeFs(probeDir: string): Promise<string[]> {
  const events: string[] = [];
  const probe = await fsPromises.open(path.join(probeDir, 'probe'), 'w');
  const handleProto = Object.getPrototypeOf(probe) as { sync: (this: object) => Promise<void> };
  await probe.close();
  const pathOf = new WeakMap<object, string>();
  const { open, rename, rm } = fsPromises;
  const { sync } = handleProto;
  const mutable = fsPromises as { -readonly [K in keyof FsPromises]: FsPromises[K] };
  mutable.open = (async (file: string, ...rest: unknown[]) => {
    const handle = await (open as (...a: unknown[]) => Promise<object>)(file, ...rest);
    pathOf.set(handle, String(file));
    return handle;
  }) as FsPromises['open'];
  mutable.rename = (async (from: string, to: string) => {
    events.push(`rename ${from} -> ${to}`);
    return rename(from, to);
  }) as FsPromises['rename'];
  mutable.rm = (async (target: string, options?: object) => {
    events.push(`rm ${target}`);
    return rm(target, options);
  }) as FsPromises['rm'];
  handleProto.sync = async function (this: object) {
    events.push(`sync ${pathOf.get(this) ?? '?'}`);
    return sync.call(this);
  };
  restores.push(() => {
    Object.assign(mutable, { open, rename, rm });
    handleProto.sync = sync;
  });
  syncBuiltinESMExports();
  return events;
}

describe('replay swaps the rebuilt state in durably', () => {
  it('fsyncs the rebuilt store before the swap, and the data directory before the old state is removed', async () => {
    const { dir, remove } = await tempDir('svcdb-rebuild-sync-');
    try {
      const stack = await openStack(dir);
      const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
      const options = { timeoutMs: 30_000, maxRows: 100, tenant: 'default' };
      await engine.execute('CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT)', options);
      await engine.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')", options);
      const layout = stack.layout;
      await stack.close();

      const liveStore = await openStateStore(layout.stateDir);
      const log = await openLogAt(layout.logDir);
      const events = await observeFs(dir);
      try {
        await rebuildProjections({ log, layout, liveStore, batchBytesMax: 4096, logger: silentLogger, onProgress: () => {}, workerThreads: 0 });
      } finally {
        await log.close();
      }
      const swap = events.indexOf(`rename ${layout.rebuildDir} -> ${layout.stateDir}`);
      expect(swap, events.join('\n')).toBeGreaterThan(0);
      const rebuiltSynced = events.lastIndexOf(`sync ${layout.rebuildDir}`, swap);
      expect(rebuiltSynced, `the rebuilt store is fsynced before the swap:\n${events.join('\n')}`).toBeGreaterThanOrEqual(0);
      const oldRemoved = events.indexOf(`rm ${layout.stateDir}.old`, swap);
      expect(oldRemoved, events.join('\n')).toBeGreaterThan(swap);
      const rootSynced = events.indexOf(`sync ${layout.root}`, swap);
      expect(rootSynced, `the renames are fsynced before the old state is removed:\n${events.join('\n')}`).toBeGreaterThan(swap);
      expect(rootSynced).toBeLessThan(oldRemoved);

      // And the swapped-in state is the rebuilt one.
      const reopened = await openStack(dir);
      try {
        const again = new SqlEngine({ projections: reopened.projections, types: typeSystem, logger: silentLogger });
        expect((await again.execute('SELECT id, name FROM t ORDER BY id', options)).rows).toEqual([
          { id: 1, name: 'a' },
          { id: 2, name: 'b' },
        ]);
      } finally {
        await reopened.close();
      }
    } finally {
      await remove();
    }
  }, 60_000);
});
