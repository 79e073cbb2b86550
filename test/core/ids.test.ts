import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { newUlid } from '../../core/ids.js';

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
