/** What the generator makes: one statement and what the runner needs to judge it. */

/** One generated statement with what the runner needs to judge it. */
export interface FuzzStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
  /** The category it was generated for (the per-category report). */
  readonly category: Category;
  /** Features used (typed literals, frames, ...), for the per-feature refusal report. */
  readonly features: readonly string[];
  /** Rows are compared in order: the top-level ORDER BY is a total order of the output. */
  readonly ordered: boolean;
  /** It changes data: the runner reloads the tables afterwards. */
  readonly changesData: boolean;
}

export const CATEGORIES = [
  'where',
  'expr',
  'string',
  'order_limit',
  'distinct',
  'aggregate',
  'join',
  'subquery',
  'cte',
  'setop',
  'window',
  'jsonb',
  'datetime',
  'array',
  'param',
  'dml',
  'invalid',
] as const;
export type Category = (typeof CATEGORIES)[number];

export type Draft = Omit<FuzzStatement, 'category' | 'features'> & { readonly features?: readonly string[] };
