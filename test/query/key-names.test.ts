import { describe, expect, it } from 'vitest';
import { RememberedKeyNames } from '../../query/key-names.js';

describe('RememberedKeyNames', () => {
  it('bounds the maps together: past the bound every map starts over', () => {
    const bound = new RememberedKeyNames<string>(2);
    const a = new Map<string, string>();
    const b = new Map<string, string>();
    bound.remember(a, '1', 'k1');
    bound.remember(b, '2', 'k2');
    expect([...a, ...b]).toEqual([
      ['1', 'k1'],
      ['2', 'k2'],
    ]);
    bound.remember(a, '3', 'k3');
    expect([...a]).toEqual([['3', 'k3']]);
    expect(b.size).toBe(0);
  });
});
