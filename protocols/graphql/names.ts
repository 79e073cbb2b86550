/**
 * GraphQL names for SQL names (docs/graphql.md, "Naming"). A GraphQL name matches
 * /^[_A-Za-z][_0-9A-Za-z]*$/ and may not start with `__` (reserved for introspection); SQL
 * identifiers may hold anything. The rule, applied in this order:
 *   1. every character outside [_0-9A-Za-z] becomes `_`  (`my-table` → `my_table`, `héllo` → `h_llo`);
 *   2. an empty result, or one starting with a digit or with `__`, gets the prefix `x`
 *      (`1st` → `x1st`, `__x` → `x__x`, `` → `x`);
 *   3. a name already taken in its scope gets `_2`, `_3`, … (first come, by table id or column position).
 */

const VALID = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** Whether a text is a valid GraphQL name we may define (not an introspection name). */
export function isGraphqlName(text: string): boolean {
  return VALID.test(text) && !text.startsWith('__');
}

/** Steps 1 and 2 of the rule: a valid GraphQL name for any SQL identifier. */
export function graphqlNameOf(sqlName: string): string {
  const replaced = sqlName.replace(/[^_0-9A-Za-z]/g, '_');
  if (replaced === '' || /^[0-9]/.test(replaced) || replaced.startsWith('__')) return `x${replaced}`;
  return replaced;
}

/** Step 3: allocates names in one scope, suffixing `_2`, `_3`, … until a name is free. */
export class NameScope {
  private readonly used = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.used.add(name);
  }

  has(name: string): boolean {
    return this.used.has(name);
  }

  /** The first free name of `base`, `base_2`, `base_3`, … for which `free` also holds; marks it used. */
  claim(base: string, free: (candidate: string) => boolean = () => true): string {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}_${n}`;
      if (!this.used.has(candidate) && free(candidate)) {
        this.used.add(candidate);
        return candidate;
      }
    }
  }

  add(name: string): void {
    this.used.add(name);
  }
}

/** A SQL identifier in double quotes (embedded quotes doubled). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
