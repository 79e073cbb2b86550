/**
 * The merge of replay's sorted runs (projections/replay-merge.ts) settles most comparisons with the
 * runner-up from the bytes a key shares with the one before it, and hands those bytes to the table
 * builder for its prefix compression. Whatever the runs (overlapping, keys that are prefixes of
 * others, deletes winning), it must give the state the runs leave applied in order, and a hint
 * must be exactly the bytes the key shares with the key added before it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunMerger, type SortedRun } from '../../projections/replay-merge.js';
import { TAG_DEL, TAG_PUT } from '../../projections/replay-sort.js';
import type { TableBuilder } from '../../projections/replay-tables.js';

interface Op {
  readonly key: string;
  readonly value: string | null;
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** A run as a worker writes it: WriteBatch entries, the last op of each key, in key order. */
function runOf(ops: readonly Op[]): SortedRun {
  const last = new Map<string, string | null>();
  for (const op of ops) last.set(op.key, op.value);
  const parts: number[] = [];
  for (const key of [...last.keys()].sort((a, b) => Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')))) {
    const value = last.get(key)!;
    const keyBytes = Buffer.from(key, 'hex');
    parts.push(value === null ? TAG_DEL : TAG_PUT, keyBytes.length, ...keyBytes);
    if (value !== null) parts.push(Buffer.from(value, 'hex').length, ...Buffer.from(value, 'hex'));
  }
  return { buf: Uint8Array.from(parts), from: 0, end: parts.length };
}

/** Records what the merge adds, checking each hint against the key added before. */
function recorder(capacity: number): { builder: TableBuilder; entries: [string, string][]; tables: () => number } {
  const entries: [string, string][] = [];
  let previous: Uint8Array | null = null;
  let inTable = 0;
  let tables = 0;
  const builder = {
    get full() {
      return inTable >= capacity;
    },
    add(src: Uint8Array, keyFrom: number, keyLength: number, valueFrom: number, valueLength: number, sharedHint = -1) {
      const key = src.slice(keyFrom, keyFrom + keyLength);
      if (sharedHint >= 0) {
        expect(previous).not.toBeNull();
        let common = 0;
        while (common < key.length && common < previous!.length && key[common] === previous![common]) common += 1;
        expect(sharedHint).toBe(common);
      }
      previous = key;
      inTable += 1;
      entries.push([hex(key), hex(src.subarray(valueFrom, valueFrom + valueLength))]);
    },
  };
  return {
    builder: builder as unknown as TableBuilder,
    entries,
    tables: () => {
      tables += 1;
      inTable = 0;
      return tables;
    },
  };
}

// Keys from a small alphabet and of varied lengths: long shared prefixes, keys that are prefixes of others.
const keyArb = fc.uint8Array({ minLength: 1, maxLength: 6 }).map((bytes) => hex(bytes.map((b) => b % 3)));
const opArb = fc.record({ key: keyArb, value: fc.option(fc.uint8Array({ maxLength: 3 }).map(hex), { nil: null, freq: 4 }) });

describe('RunMerger', () => {
  it('gives the state of the runs applied in order, with exact shared-prefix hints', () => {
    fc.assert(
      fc.property(fc.array(fc.array(opArb, { maxLength: 40 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 30 }), (runs, capacity) => {
        const state = new Map<string, string | null>();
        for (const run of runs) for (const op of run) state.set(op.key, op.value);
        const expected = [...state.entries()]
          .filter((entry): entry is [string, string] => entry[1] !== null)
          .sort((a, b) => Buffer.compare(Buffer.from(a[0], 'hex'), Buffer.from(b[0], 'hex')));
        const merger = new RunMerger(runs.map(runOf));
        const recording = recorder(capacity);
        // A table at a time, as writeTables does: the builder starts afresh after each.
        while (merger.fill(recording.builder)) recording.tables();
        expect(recording.entries).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
