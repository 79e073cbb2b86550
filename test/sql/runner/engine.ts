/** What the .slt runner and the differential harness need from a SQL engine. */

export interface ResultColumn {
  readonly name: string;
  /** The engine's type text: PostgreSQL's type name (int4, jsonb, _text...) or svcdb's metadata type. */
  readonly type: string;
}

export type EngineResult =
  | { readonly kind: 'rows'; readonly columns: readonly ResultColumn[]; readonly rows: readonly (readonly unknown[])[] }
  | { readonly kind: 'error'; readonly message: string };

export interface SqlEngine {
  /** For messages: 'pglite', 'svcdb'. */
  readonly name: string;
  /** Dialect names that `onlyif` / `skipif` lines test against. */
  readonly dialects: ReadonlySet<string>;
  /** Runs one SQL statement. Errors of the statement are a result; only a broken engine throws. */
  execute(sql: string): Promise<EngineResult>;
  close(): Promise<void>;
}

/** Every engine answers to these, as run.mjs does; each adds its own name. */
export const POSTGRES_DIALECTS = ['postgresql', 'postgres'] as const;
