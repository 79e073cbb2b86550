/**
 * The parse tree handed to the binder: node-sql-parser's AST, seen through a loose type so its
 * own types do not leak past query/parse/. Only the binder reads it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AstNode = { readonly type?: string; readonly [key: string]: any };

export interface ExplainOptions {
  readonly analyze: boolean;
  readonly format: 'text' | 'json' | 'yaml';
}

export interface QualifiedName {
  readonly schema: string | null;
  readonly name: string;
}

/** svcdb's CDC statements (parse/cdc-statements.ts). */
export type CdcStatement =
  | {
      readonly kind: 'cdc_create';
      readonly table: QualifiedName;
      readonly destination:
        | { readonly kind: 'kafka'; readonly brokers: string; readonly topic: string | null }
        | { readonly kind: 'kinesis'; readonly stream: string; readonly region: string };
      readonly format: 'json' | 'avro';
      readonly name: string | null;
      readonly snapshot: boolean;
      /** WITH (operations = ..., columns = ..., predicate = ...): which events the stream sends. */
      readonly filter: { readonly operations?: readonly string[]; readonly columns?: readonly string[]; readonly predicate?: string } | null;
    }
  | { readonly kind: 'cdc_show' }
  | { readonly kind: 'cdc_status'; readonly name: string }
  | { readonly kind: 'cdc_alter'; readonly name: string; readonly action: 'PAUSE' | 'RESUME' }
  | { readonly kind: 'cdc_drop'; readonly name: string; readonly ifExists: boolean };

/** Statements the adapter recognises itself (node-sql-parser cannot parse them). */
export type CustomStatement =
  | { readonly kind: 'rename_column'; readonly table: QualifiedName; readonly ifExists: boolean; readonly from: string; readonly to: string }
  | { readonly kind: 'transaction'; readonly command: 'BEGIN' | 'COMMIT' | 'ROLLBACK' }
  | CdcStatement;

export interface ParsedStatement {
  /** The statement's original text (without the trailing semicolon). */
  readonly text: string;
  /** Offset of the statement in the request text. */
  readonly offset: number;
  readonly explain: ExplainOptions | null;
  readonly ast: AstNode | null;
  readonly custom: CustomStatement | null;
  /** VECTOR(n) dimensions in order of appearance (see preprocess.ts). */
  readonly vectorDims: readonly (number | null)[];
  /** CREATE INDEX ... USING hnsw. */
  readonly hnsw: boolean;
  /** LIMIT/OFFSET expressions the pre-processor replaced by $LIMIT_PARAM_BASE+i. */
  readonly limitExprs?: readonly string[];
}
