import { setOwn } from '../core/json-exact.js';
import type { QType, QValue, TypeSystem } from './types/contract.js';

/** Column metadata of a result. */
export interface ResultColumn {
  readonly name: string;
  /** SQL type text (INTEGER, NUMERIC(10,2), TEXT[], ...). */
  readonly type: string;
  readonly nullable: boolean;
}

/** A JSON-ready row keyed by the (unique) column names. */
export type JsonRow = Record<string, unknown>;

/** What one request returns: the result of its last statement. */
export interface QueryResult {
  /** SELECT, INSERT, UPDATE, DELETE, CREATE TABLE, ... */
  readonly command: string;
  readonly columns: ResultColumn[];
  readonly rows: JsonRow[];
  readonly rowCount: number;
  /** Rows inserted, updated or deleted by DML; null for other statements. */
  readonly affectedRows: number | null;
  /** The rows were cut at maxRows. */
  readonly truncated: boolean;
}

/** Converts rows of values to JSON objects (unique names, types.toJson per column). */
export class RowConverter {
  private readonly toJson: ((v: QValue) => unknown)[];
  /** A column is named `__proto__` (PostgreSQL allows it): its value needs setOwn. */
  private readonly protoNamed: boolean;

  constructor(
    types: TypeSystem,
    private readonly names: readonly string[],
    columnTypes: readonly QType[],
  ) {
    this.toJson = columnTypes.map((t) => (v: QValue) => (v === null ? null : types.toJson(t, v)));
    this.protoNamed = names.includes('__proto__');
  }

  convert(row: readonly QValue[]): JsonRow {
    const out: JsonRow = {};
    if (this.protoNamed) for (let i = 0; i < this.names.length; i++) setOwn(out, this.names[i]!, this.toJson[i]!(row[i] ?? null));
    else for (let i = 0; i < this.names.length; i++) out[this.names[i]!] = this.toJson[i]!(row[i] ?? null);
    return out;
  }
}

/** The result of a statement without rows (DDL, transaction control, an empty request). */
export function emptyResult(command: string, affectedRows: number | null = null): QueryResult {
  return { command, columns: [], rows: [], rowCount: 0, affectedRows, truncated: false };
}
