/**
 * Row keys remembered by what requests name them with (a GET's id text, a point SELECT's parameter),
 * as the point-read cache's name of the key (rowCacheName): a value read again skips its parse, key
 * encoding and latin1 text. Kept in maps per reader or plan, bounded together: each entry costs its
 * two short strings and a Map entry (measured: 86 bytes for a 6-digit int8 id, so at most ~11 MiB);
 * past the bound they all start over.
 */
export class RememberedKeyNames<K> {
  private readonly maps = new Set<Map<K, string>>();
  private held = 0;

  constructor(private readonly entriesMax: number = KEY_NAMES_MAX) {}

  /** Remembers `name` for `value` in `names` (one of the maps this bound counts); the caller checked it is new. */
  remember(names: Map<K, string>, value: K, name: string): void {
    if (this.held >= this.entriesMax) {
      for (const map of this.maps) map.clear();
      this.maps.clear();
      this.held = 0;
    }
    names.set(value, name);
    this.maps.add(names);
    this.held += 1;
  }
}

/** Entries all remembered key names hold together, per PointReader / PointSelects. */
const KEY_NAMES_MAX = 131_072;
