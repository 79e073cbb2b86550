import { parseSql, type ParsedStatement } from './parse/index.js';
import { evictSecondChance } from './second-chance.js';

/**
 * Longest text kept: statements sent again are short ones with parameters; a long text (a bulk
 * VALUES list) is rarely sent twice, and freezing and keeping its tree would cost more than it saves.
 */
export const PARSE_CACHE_TEXT_CHARS_MAX = 4096;

/** A text's statements, and whether they were used since put (or moved) at the back of the order. */
interface ParseSlot {
  readonly statements: readonly ParsedStatement[];
  used: boolean;
}

/**
 * Parsed statements by their text, evicting by second chance (CLOCK, as PlanCache): a statement sent
 * again (an INSERT with other parameters, a SELECT whose plan the catalog invalidated) skips
 * libpg-query and the translation. A parse depends on the text alone, never on the catalog, so
 * nothing invalidates an entry: what the statement means is bound again on every run. Entries are
 * deep-frozen, so code that would change a shared statement throws instead of corrupting the next run.
 * A hit only marks its entry: moving it to the back of the Map (a delete and a set per hit, as an
 * LRU does) leaves a deleted entry in the hot text's hash chain each time until the Map is rebuilt,
 * so every look-up of that text walked a chain as long as the cache (~2.6 us a hit measured at 512 entries).
 */
export class ParseCache {
  private readonly entries = new Map<string, ParseSlot>();

  constructor(private readonly capacity: number) {}

  /** parseSql(sql), from the cache when the same text was parsed before; errors are not cached. */
  parse(sql: string): readonly ParsedStatement[] {
    const found = this.entries.get(sql);
    if (found) {
      found.used = true;
      return found.statements;
    }
    const parsed = parseSql(sql);
    if (this.capacity > 0 && sql.length <= PARSE_CACHE_TEXT_CHARS_MAX) {
      this.entries.set(sql, { statements: deepFreeze(parsed), used: false });
      while (this.entries.size > this.capacity) evictSecondChance(this.entries);
    }
    return parsed;
  }

  /** The statements of a text parsed before, without parsing or marking it used; undefined: not cached. */
  peek(sql: string): readonly ParsedStatement[] | undefined {
    return this.entries.get(sql)?.statements;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Freezes a syntax tree of plain objects and arrays (typed arrays cannot be frozen and are left as they are). */
function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === null || typeof item !== 'object' || ArrayBuffer.isView(item) || Object.isFrozen(item)) continue;
    Object.freeze(item);
    for (const key of Object.keys(item)) stack.push((item as Record<string, unknown>)[key]);
  }
  return value;
}
