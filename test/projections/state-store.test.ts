import { afterEach, describe, expect, it } from 'vitest';
import { openStateStore, type StateStore } from '../../projections/index.js';
import { tempDir } from '../helpers/stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function store(): Promise<StateStore> {
  const { dir, remove } = await tempDir('svcdb-store-');
  const opened = await openStateStore(dir);
  cleanups.push(remove, () => opened.close());
  return opened;
}

const key = (text: string): Uint8Array => Buffer.from(text);

describe('state store writes (one chained LevelDB batch per write)', () => {
  it('applies puts and deletes in order, all of them', async () => {
    const db = await store();
    await db.write([
      { type: 'put', key: key('a'), value: key('1') },
      { type: 'put', key: key('b'), value: key('2') },
    ]);
    // A put then a delete of the same key in one batch: the later op wins, as in the array form.
    await db.write([
      { type: 'del', key: key('a') },
      { type: 'put', key: key('c'), value: key('3') },
      { type: 'put', key: key('b'), value: key('22') },
      { type: 'put', key: key('d'), value: key('4') },
      { type: 'del', key: key('d') },
    ]);
    const entries: [string, string][] = [];
    for await (const batch of db.entries({})) for (const [k, v] of batch) entries.push([Buffer.from(k).toString(), Buffer.from(v).toString()]);
    expect(entries).toEqual([
      ['b', '22'],
      ['c', '3'],
    ]);
  });

  it('a write with an invalid op changes nothing and the store stays usable', async () => {
    const db = await store();
    const bad = [
      { type: 'put', key: key('x'), value: key('1') },
      { type: 'put', key: undefined, value: key('2') },
    ] as never;
    await expect(db.write(bad)).rejects.toThrow();
    expect(await db.get(key('x'))).toBeUndefined();
    await db.write([{ type: 'put', key: key('y'), value: key('3') }]);
    expect(Buffer.from((await db.get(key('y')))!).toString()).toBe('3');
  });
});
