import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { newUlid, newUuid } from '../../core/ids.js';

describe('newUlid', () => {
  it('gives valid, unique ULIDs that carry the current time', () => {
    const before = Date.now();
    const ids = Array.from({ length: 20_000 }, () => newUlid());
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    const time = decodeTime(ids[0]!);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });

  it('follows the clock from one millisecond to the next (the time part is cached per millisecond)', () => {
    const started = Date.now();
    let checked = 0;
    while (Date.now() - started < 5 || checked < 1000) {
      const before = Date.now();
      const id = newUlid();
      const after = Date.now();
      const time = decodeTime(id);
      expect(time).toBeGreaterThanOrEqual(before);
      expect(time).toBeLessThanOrEqual(after);
      checked += 1;
    }
  });

  it('uses all of the random alphabet (the pool is not stuck)', () => {
    const chars = new Set(Array.from({ length: 2000 }, () => newUlid().slice(10)).join(''));
    expect(chars.size).toBe(32);
  });
});

describe('newUuid', () => {
  const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('gives version 4 UUIDs in the text crypto.randomUUID gives, all distinct (across many refills of the pool)', () => {
    // 20,000 ids take 320,000 random bytes: the 4 KiB pool is refilled ~80 times, newUlid's draws in between.
    const ids = Array.from({ length: 20_000 }, (_v, i) => (i % 7 === 0 ? (newUlid(), newUuid()) : newUuid()));
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(ids.length);
    expect(newUuid()).toMatch(V4);
  });

  it('draws every random digit from all 16 values (no digit stuck or left from the previous id)', () => {
    const ids = Array.from({ length: 2000 }, () => newUuid());
    for (let at = 0; at < 36; at++) {
      if ([8, 13, 14, 18, 19, 23].includes(at)) continue; // the dashes, the version digit and the variant digit
      expect(new Set(ids.map((id) => id[at])).size, `position ${at}`).toBe(16);
    }
    expect(new Set(ids.map((id) => id[14]))).toEqual(new Set(['4']));
    expect(new Set(ids.map((id) => id[19]))).toEqual(new Set(['8', '9', 'a', 'b']));
  });
});
