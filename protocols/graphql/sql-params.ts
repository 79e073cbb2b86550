/** The `$n` parameters of one SQL statement: values never enter the SQL text. */
export class SqlParams {
  readonly values: unknown[] = [];
  private aliasCount = 0;

  /** Adds a value; returns its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** A fresh table alias (t0, t1, …) for a subquery of this statement. */
  alias(): string {
    return `"t${this.aliasCount++}"`;
  }
}
