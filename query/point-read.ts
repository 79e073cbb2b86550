import type { TableDef } from '../core/catalog.js';
import { SvcError } from '../core/errors.js';
import { encodeKey } from '../core/key-encoding.js';
import type { SqlType, SqlTypeName, SqlValue } from '../core/values.js';
import { keys, rowCacheName, type PointReadStore } from '../projections/index.js';
import { RememberedKeyNames } from './key-names.js';
import type { JsonRow } from './result.js';
import { NO_WRAP, SharedRowMemo, type AnswerWrap, type RowShape, type RowShapes } from './row-shapes.js';
import type { TypeSystem } from './types/contract.js';

/**
 * A row by its primary key without SQL: one store read, decoded and shaped as the SQL path's
 * `SELECT <columns> FROM t WHERE pk1 = $1 AND ...` would give it (GET /tables/{t}/rows/{id}).
 *
 * Visibility is the SQL path's: a statement outside a transaction reads the store as of its start,
 * and the engine calls this only once every acknowledged write is applied (the read barrier,
 * projections/read-barrier.ts), so one read of the current store sees every acknowledged write. Anything this path cannot answer
 * exactly as SQL would (views, key types whose equality is not byte equality of the encoded key,
 * an id SQL would refuse with its own error) answers `undefined`: the caller runs the SQL.
 */
export interface KeyRead {
  /** The table, as the caller's tenant's catalog has it (tenancy is the lookup's). */
  readonly table: TableDef;
  /** The primary key's values as text, in key order (the URL's id parts). */
  readonly key: readonly string[];
  /** Column names to return, in order, distinct, each a column of the table. */
  readonly columns: readonly string[];
}

/**
 * Key column types converted from text by the same function the SQL path's parameters use
 * (TypeSystem.fromJson of the column's type) and whose SQL equality is equality of the encoded
 * key. Not here: char(n) (blank-padded comparison), floats (-0 = 0, NaN), numeric (1.0 = 1.00),
 * timestamps and dates (their text form depends on the session), bool, jsonb, vector.
 */
const DIRECT_KEY_TYPES: ReadonlySet<SqlTypeName> = new Set<SqlTypeName>(['int2', 'int4', 'int8', 'text', 'varchar', 'uuid']);

/**
 * Row keys are remembered by their id text (key-names.ts) only for one-column ids of up to this many
 * characters: such a substring of the URL is its own copy in V8, never a view that would keep the whole URL.
 */
const ID_TEXT_CHARS_MAX = 12;

/**
 * The keyNames key of an id text: a canonical decimal integer of up to 9 digits ('0', '7', '-12';
 * not '01', '+1', '-0', ' 1', '1.0') as the number it spells, any other text as itself. A Map finds a
 * small integer by its value (no text to hash, no stored text to read and compare: one memory access
 * less per cached read); one text gives one key, and no two texts the same one.
 */
export function idTextKey(text: string): string | number {
  const length = text.length;
  const negative = length > 1 && text.charCodeAt(0) === 45; // '-'
  const start = negative ? 1 : 0;
  if (length === 0 || length - start > 9) return text;
  if (text.charCodeAt(start) === 48) return length === 1 ? 0 : text; // '0' alone; '01', '-0' stay text
  let value = 0;
  for (let i = start; i < length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return text;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

interface TableReader {
  readonly keyTypes: readonly SqlType[];
  readonly descending: readonly boolean[];
  /** The point-read cache's name of a row key (rowCacheName), by the id text of a one-column key (idTextKey). */
  readonly keyNames: Map<string | number, string>;
  /** The column list of the last read, by identity, and its shape. */
  last: { readonly names: readonly string[]; readonly shape: RowShape } | null;
}

/** A row by key: null when no row has it, undefined when only the SQL path answers exactly. */
export type KeyReadResult = JsonRow | null | undefined;

export class PointReader {
  /** Per table definition: an ALTER makes a new TableDef, so a stale reader is never found. */
  private readonly readers = new WeakMap<TableDef, TableReader | null>();
  /** The bound of the readers' keyNames together. */
  private readonly keyNames = new RememberedKeyNames<string | number>();

  constructor(
    private readonly store: PointReadStore,
    private readonly types: TypeSystem,
    private readonly shapes: RowShapes,
  ) {}

  /**
   * The row (null: no row has that key), or undefined when only the SQL path can answer exactly.
   * Answered at once where the store reads synchronously (no promise, no turn of the event loop).
   */
  read(request: KeyRead): KeyReadResult | Promise<KeyReadResult> {
    const found = this.located(request);
    if (found === undefined) return undefined;
    const { reader, key } = found;
    if (this.store.getRowSync) return this.shaped(reader, request, this.store.getRowSync(request.table.id, key).image);
    if (this.store.getSync) return this.shaped(reader, request, this.store.getSync(key));
    return this.store.get(key).then((image) => this.shaped(reader, request, image));
  }

  /**
   * read()'s row as JSON text written by `toText`, inside `wrap` when given (null: no row, undefined:
   * only SQL answers). The text is kept with the point-read cache's entry (its memo slot, shared with
   * every reader of the same columns: a point SELECT of them, fast-point.ts), so a row read again is
   * not decoded, shaped nor written again: `toText` must give the same text for the same row every time.
   */
  readText(request: KeyRead, toText: (row: JsonRow) => string, wrap: AnswerWrap = NO_WRAP): string | null | undefined | Promise<string | null | undefined> {
    const byName = this.store.getRowSyncByName;
    const found = byName === undefined ? undefined : this.locatedByName(request);
    if (byName === undefined || found === undefined) {
      const read = this.read(request);
      const text = (row: KeyReadResult): string | null | undefined => (row === null || row === undefined ? row : wrap.before + toText(row) + wrap.after);
      return read instanceof Promise ? read.then(text) : text(read);
    }
    // A first read has the key's bytes already: the cache reads the store with them (by name it would make them again).
    const entry =
      found.key !== undefined && this.store.getRowSync ? this.store.getRowSync(request.table.id, found.key, found.name) : byName(request.table.id, found.name);
    if (!entry.found) return null;
    const shape = this.shapeOf(found.reader, request.table, request.columns);
    const memo = entry.memoOwner === shape ? (entry.memo as SharedRowMemo) : undefined;
    if (memo?.toText === toText) return memo.answerOf(wrap, entry, shape);
    // GET sends the text alone: the row is not kept (a point SELECT of the same columns makes it when it needs it).
    return SharedRowMemo.made(toText, shape.shape(entry.image!), wrap, entry, shape, false).answerOf(wrap, entry, shape);
  }

  /**
   * located()'s reader and the row key as the point-read cache names it (rowCacheName): taken from
   * keyNames for an id read before (the same text always gives the same key: no parse, no encoding).
   */
  private locatedByName(request: KeyRead): { reader: TableReader; name: string; key: Uint8Array | undefined } | undefined {
    const reader = this.readerOf(request.table);
    const text = request.key.length === 1 ? request.key[0]! : undefined;
    const idKey = text === undefined ? undefined : idTextKey(text);
    const known = reader === null || idKey === undefined ? undefined : reader.keyNames.get(idKey);
    if (known !== undefined) return { reader: reader!, name: known, key: undefined };
    const found = this.located(request);
    if (found === undefined) return undefined;
    const name = rowCacheName(found.key);
    if (idKey !== undefined && text!.length <= ID_TEXT_CHARS_MAX) this.keyNames.remember(found.reader.keyNames, idKey, name);
    return { reader: found.reader, name, key: found.key };
  }

  /** The table's reader and the row key of the request; undefined when only SQL answers exactly. */
  private located(request: KeyRead): { reader: TableReader; key: Uint8Array } | undefined {
    const { table } = request;
    const reader = this.readerOf(table);
    if (reader === null || request.key.length !== reader.keyTypes.length) return undefined;
    const values = this.keyValues(reader, request.key);
    if (values === undefined) return undefined;
    return { reader, key: keys.rowKey(table.id, encodeKey(reader.keyTypes, values, reader.descending)) };
  }

  private shaped(reader: TableReader, request: KeyRead, image: Uint8Array | undefined): KeyReadResult {
    if (image === undefined) return null;
    return this.shapeOf(reader, request.table, request.columns).shape(image);
  }

  private shapeOf(reader: TableReader, table: TableDef, names: readonly string[]): RowShape {
    // The same frozen list as the last read's (the REST route keeps one every-column list per table):
    // no key to build. Only a frozen list: one its caller could change since must be read again.
    if (reader.last !== null && reader.last.names === names) return reader.last.shape;
    const shape = this.shapes.of(table, names);
    if (Object.isFrozen(names)) reader.last = { names, shape };
    return shape;
  }

  private readerOf(table: TableDef): TableReader | null {
    let reader = this.readers.get(table);
    if (reader === undefined) {
      reader = newReader(table);
      this.readers.set(table, reader);
    }
    return reader;
  }

  /** The key's values as SQL's parameters would be; undefined when SQL refuses one (it then says why, in its own words). */
  private keyValues(reader: TableReader, parts: readonly string[]): SqlValue[] | undefined {
    const values: SqlValue[] = [];
    for (let i = 0; i < parts.length; i++) {
      let value: SqlValue;
      try {
        value = this.types.fromJson(reader.keyTypes[i]!, parts[i]) as SqlValue;
      } catch (error) {
        if (error instanceof SvcError) return undefined;
        throw error;
      }
      if (value === null) return undefined;
      values.push(value);
    }
    return values;
  }
}

function newReader(table: TableDef): TableReader | null {
  if (table.kind !== 'table' || table.primaryKey.length === 0) return null;
  const keyTypes = table.primaryKey.map((id) => table.columns.find((c) => c.id === id)!.type);
  if (!keyTypes.every((t) => DIRECT_KEY_TYPES.has(t.name))) return null;
  const primary = table.indexes.find((i) => i.primary);
  const descending = primary?.descending ?? keyTypes.map(() => false);
  return { keyTypes, descending, keyNames: new Map(), last: null };
}
