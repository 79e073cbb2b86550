import { encodeKey } from '../core/key-encoding.js';
import type { SqlType, SqlValue } from '../core/values.js';
import { keys, MEMO_OVERHEAD_BYTES, rowCacheName, stringBytes, type PointReadStore } from '../projections/index.js';
import type { Row } from './exec/context.js';
import { missingParameter } from './exec/index.js';
import { pkTypes } from './exec/ops/scan.js';
import { rowDecoder } from './exec/ops/row-decoder.js';
import type { Expr } from './plan/expr.js';
import type { Plan, ScanNode } from './plan/nodes.js';
import { RememberedKeyNames } from './key-names.js';
import { convertParams, type PreparedQuery } from './prepare.js';
import type { JsonRow } from './result.js';
import { SharedRowMemo, type AnswerWrap, type RowShape, type RowShapes } from './row-shapes.js';
import type { CachedRow } from '../projections/index.js';
import type { QValue, TypeSystem } from './types/contract.js';

/**
 * A prepared SELECT that reads one row by its whole primary key: what the general path's plan
 * does (scan.ts tableRows with a point range, then the project), done as one synchronous store
 * read, without a snapshot, an execution context or operator generators.
 *
 * Why the answer is the same: a statement outside a transaction reads the store as of its start,
 * and the engine answers here only once every acknowledged write is applied (the read barrier,
 * projections/read-barrier.ts), so one read of the current store sees exactly what a snapshot taken now would. The plan was bound in
 * the caller's tenant (the plan cache is keyed by tenant and checked against the catalog), views
 * were expanded by the binder, and the key values, the decoding and the output columns are the
 * plan's own, computed by the same functions the operators use.
 */
interface PointPlan {
  readonly scan: ScanNode;
  readonly keyTypes: readonly SqlType[];
  readonly descending: readonly boolean[];
  /** The key's values from the statement's parameters (the plan's `eq` expressions). */
  readonly key: readonly ((params: readonly QValue[]) => QValue)[];
  readonly decode: (pk: Uint8Array, image: Uint8Array) => Row;
  /** Scan columns the output takes, in order (null: the scan's row is the output). */
  readonly pick: readonly number[] | null;
  /**
   * The point-read cache's name of a row key (rowCacheName), by the parameter it was read with: kept
   * on the plan itself (not in a WeakMap by plan), so a read again costs one WeakMap look-up less.
   * null: the key's value may differ for the same parameter text (clockDependent), nothing is remembered.
   */
  readonly names: Map<number | string, string> | null;
  /**
   * The shape whose row and text this plan's answer is (sharedShape), or null: its rows are made by
   * the plan's own decoder and converter, and kept under the plan.
   */
  readonly shape: RowShape | null;
}

/** What rows(..., toText, frame) keeps in a cached row's memo slot (its owner is the plan). */
interface RowMemo {
  readonly toText: (row: JsonRow) => string;
  readonly frame: RowsFrame | undefined;
  readonly row: JsonRow;
  readonly text: string;
}

/**
 * Text written around the rows' JSON array in rowsText (e.g. POST /query's `{"success":true,"data":`
 * and `}`): the whole answer is then what is kept with the row, sent as it is. Compared by identity.
 */
export interface RowsFrame {
  readonly before: string;
  readonly after: string;
}

/** The rows' array text `array`, inside `frame` when there is one. */
const framed = (array: string, frame: RowsFrame | undefined): string => (frame === undefined ? array : frame.before + array + frame.after);

/** Rows of a SELECT as execute() collects them. */
export interface CollectedRows {
  readonly rows: JsonRow[];
  readonly truncated: boolean;
  /** With rows(..., toText): the rows as a JSON array written by toText, inside `frame` when given (each row frozen, shared with other answers). */
  readonly rowsText?: string;
}

/**
 * Row keys are remembered by the statement's one parameter, per plan (key-names.ts), only for an
 * integer (not -0) or a string of up to this many characters: a Map compares those exactly as the
 * conversion would tell them apart.
 */
const PARAM_TEXT_CHARS_MAX = 12;

const rememberable = (value: unknown): value is number | string =>
  (typeof value === 'number' && Number.isInteger(value) && !Object.is(value, -0)) || (typeof value === 'string' && value.length <= PARAM_TEXT_CHARS_MAX);

export class PointSelects {
  /** The decision per prepared plan (null: not a point select): made once, on its first run. */
  private readonly plans = new WeakMap<PreparedQuery, PointPlan | null>();
  /** Bounds every plan's `names` together. */
  private readonly keyNamesBound = new RememberedKeyNames<number | string>();

  constructor(
    private readonly store: PointReadStore,
    private readonly types: TypeSystem,
    private readonly shapes: RowShapes,
  ) {}

  /** Whether `prepared` is answered by rows() (decided on the first call, then remembered). */
  handles(prepared: PreparedQuery): boolean {
    return this.store.getSync !== undefined && this.planOf(prepared) !== null;
  }

  /**
   * The rows of a prepared point SELECT (handles() said so), read now: at most one, converted by
   * `convert`, cut at `rowsMax` as collectPlan cuts. Parameters are converted as the general path
   * converts them, so a wrong one fails with the same error. With `toText` (which must write the same
   * text for the same row every time) the answer also has the rows' JSON text, and the row is frozen
   * and shared: both are kept with the point-read cache's entry (its memo slot) for the next read.
   * `textOnly` (with `toText`): the caller reads rowsText alone, and `rows` may be left empty (a row
   * whose text was kept by GET row is then not decoded again only to be dropped).
   */
  rows(
    prepared: PreparedQuery,
    rawParams: readonly unknown[],
    convert: (row: Row) => JsonRow,
    rowsMax: number,
    toText?: (row: JsonRow) => string,
    frame?: RowsFrame,
    textOnly = false,
  ): CollectedRows {
    const plan = this.planOf(prepared)!;
    const only = rawParams.length === 1 ? rawParams[0] : undefined;
    // The row key's name remembered for this parameter (a read before): looked up once, for known() and below.
    const remembered = plan.names !== null && rememberable(only) ? plan.names.get(only) : undefined;
    if (toText !== undefined && rowsMax >= 1 && remembered !== undefined) {
      const known = this.known(plan, remembered, toText, frame, textOnly);
      if (known !== undefined) return known;
    }
    const params = convertParams(this.types, prepared.paramTypes, rawParams);
    const values: SqlValue[] = [];
    for (const value of plan.key) {
      const v = value(params);
      // `col = NULL` matches nothing (scan.ts keyRange).
      if (v === null) return none(toText, frame);
      values.push(v as SqlValue);
    }
    const pk = encodeKey(plan.keyTypes, values, plan.descending);
    const tableId = plan.scan.table.id;
    const key = keys.rowKey(tableId, pk);
    // A new parameter's key name is made once: remembered for it and handed to the cache, which names its entry by it.
    // Only a name made from this key goes to the cache: an entry under another key's name would answer for that key.
    let name: string | undefined;
    if (remembered === undefined && plan.names !== null && rememberable(only)) this.keyNamesBound.remember(plan.names, only, (name = rowCacheName(key)));
    const entry = this.store.getRowSync ? this.store.getRowSync(tableId, key, name) : null;
    if (entry !== null && !entry.found) return none(toText, frame);
    if (toText !== undefined && entry !== null && rowsMax >= 1 && plan.shape !== null) return shared(plan.shape, entry, toText, frame, textOnly);
    const image = entry === null ? this.store.getSync!(key) : entry.image;
    if (image === undefined) return none(toText, frame);
    if (rowsMax < 1) return { rows: [], truncated: true, ...(toText ? { rowsText: framed('[]', frame) } : {}) };
    if (toText === undefined || entry === null) {
      const row = this.converted(plan, pk, image, convert);
      return { rows: [row], truncated: false, ...(toText ? { rowsText: framed(`[${toText(row)}]`, frame) } : {}) };
    }
    let memo = entry.memo as RowMemo | undefined;
    if (entry.memoOwner !== plan || memo?.toText !== toText || memo.frame !== frame) {
      const row = Object.freeze(this.converted(plan, pk, image, convert));
      memo = { toText, frame, row, text: framed(`[${toText(row)}]`, frame) };
      // The frozen row holds about what its text says again; two objects (the memo and the row) besides the strings.
      // Measured on the bench's rows (bigint, text, double; a 77-character answer): ~275 bytes of heap, counted 282.
      entry.remember(plan, memo, 2 * stringBytes(memo.text) + 2 * MEMO_OVERHEAD_BYTES);
    }
    return { rows: [memo!.row], truncated: false, rowsText: memo!.text };
  }

  /**
   * rows()'s answer for a parameter read before, when the point-read cache has its row's answer
   * kept (or knows there is no row); undefined: rows() reads it the whole way.
   */
  private known(plan: PointPlan, name: string, toText: (row: JsonRow) => string, frame: RowsFrame | undefined, textOnly: boolean): CollectedRows | undefined {
    const byName = this.store.getRowSyncByName;
    if (byName === undefined) return undefined;
    const entry = byName(plan.scan.table.id, name);
    if (!entry.found) return none(toText, frame);
    const shape = plan.shape;
    if (shape !== null) {
      // Made by any reader of the shape (GET row of the same columns too); only its answer may be new here.
      const memo = entry.memoOwner === shape ? (entry.memo as SharedRowMemo) : undefined;
      if (memo?.toText !== toText) return undefined;
      const rowsText = memo.answerOf(arrayWrap(frame), entry, shape);
      return { rows: textOnly ? TEXT_ONLY : [memo.rowOf(shape, entry)], truncated: false, rowsText };
    }
    const memo = entry.memo as RowMemo | undefined;
    if (entry.memoOwner !== plan || memo?.toText !== toText || memo.frame !== frame) return undefined;
    return { rows: [memo.row], truncated: false, rowsText: memo.text };
  }

  private converted(plan: PointPlan, pk: Uint8Array, image: Uint8Array, convert: (row: Row) => JsonRow): JsonRow {
    const row = plan.decode(pk, image);
    return convert(plan.pick === null ? row : plan.pick.map((i) => row[i]!));
  }

  /** The last prepared plan asked about and its decision: handles() then rows() of the same statement look it up once. */
  private lastPrepared: PreparedQuery | null = null;
  private lastPlan: PointPlan | null = null;

  private planOf(prepared: PreparedQuery): PointPlan | null {
    if (prepared === this.lastPrepared) return this.lastPlan;
    let plan = this.plans.get(prepared);
    if (plan === undefined) {
      plan = pointPlanOf(prepared, this.shapes);
      this.plans.set(prepared, plan);
    }
    this.lastPrepared = prepared;
    this.lastPlan = plan;
    return plan;
  }
}

/** No row: as collectPlan gives it, with the empty array's text when asked for. */
const none = (toText: ((row: JsonRow) => string) | undefined, frame: RowsFrame | undefined): CollectedRows =>
  toText ? { rows: [], truncated: false, rowsText: framed('[]', frame) } : { rows: [], truncated: false };

/** The point read a plan amounts to, or null when it is anything more than project(scan by whole primary key). */
function pointPlanOf(prepared: PreparedQuery, shapes: RowShapes): PointPlan | null {
  const plan = prepared.plan;
  let pick: number[] | null = null;
  let scan: Plan = plan;
  if (plan.kind === 'project') {
    pick = [];
    for (const expr of plan.exprs) {
      if (expr.kind !== 'column') return null;
      pick.push(expr.index);
    }
    scan = plan.input;
  }
  if (scan.kind !== 'scan' || scan.withKey || scan.filter !== null || scan.table.kind !== 'table') return null;
  const access = scan.access;
  if (access.kind !== 'pk' || !access.index.primary || access.lower !== null || access.upper !== null) return null;
  const keyTypes = pkTypes(scan.table);
  if (scan.table.primaryKey.length === 0 || access.eq.length !== keyTypes.length) return null;
  const key: ((params: readonly QValue[]) => QValue)[] = [];
  for (const expr of access.eq) {
    const value = keyValueOf(expr);
    if (value === null) return null;
    key.push(value);
  }
  const names = access.eq.some(clockDependent) ? null : new Map<number | string, string>();
  const shape = sharedShape(prepared, scan, pick, shapes);
  return { scan, keyTypes, descending: access.index.descending, key, decode: rowDecoder(scan), pick, names, shape };
}

/**
 * The RowShape whose rows are exactly this plan's answer rows, or null. The plan's rows are the scan's
 * columns `pick` (all, in order, without one), each decoded by its column id from the image
 * (rowDecoder: decodeRowInto of the table's ids and missing values) and converted by the select's
 * RowConverter: types.toJson of the output column's type, under the output name. The shape of the
 * same table definition and column names decodes the same ids with the same missing values and
 * converts by types.toJson of the column's type: the same row, and the same text from the same
 * writer, when every output is its column under the column's own name and of the column's very type
 * object (not a cast, not an alias). Any difference, and the plan keeps its own rows (null).
 */
function sharedShape(prepared: PreparedQuery, scan: ScanNode, pick: readonly number[] | null, shapes: RowShapes): RowShape | null {
  const table = scan.table;
  const outputs = prepared.plan.columns;
  const count = pick === null ? table.columns.length : pick.length;
  if (outputs.length !== count || prepared.names.length !== count) return null;
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const column = table.columns[pick === null ? i : pick[i]!];
    if (column === undefined || prepared.names[i] !== column.name || outputs[i]!.type !== column.type) return null;
    names.push(column.name);
  }
  return shapes.of(table, names);
}

/**
 * rows()'s answer from the shape's memo with the row (made now by the first reader of the shape, or
 * by any reader before: GET row of the same columns), its array framed by `frame`.
 */
function shared(shape: RowShape, entry: CachedRow, toText: (row: JsonRow) => string, frame: RowsFrame | undefined, textOnly: boolean): CollectedRows {
  const wrap = arrayWrap(frame);
  const kept = entry.memoOwner === shape ? (entry.memo as SharedRowMemo) : undefined;
  const memo = kept?.toText === toText ? kept : SharedRowMemo.made(toText, shape.shape(entry.image!), wrap, entry, shape, !textOnly);
  const rowsText = memo.answerOf(wrap, entry, shape);
  return { rows: textOnly ? TEXT_ONLY : [memo.rowOf(shape, entry)], truncated: false, rowsText };
}

/** The rows of a textOnly answer from a shape's memo: none made (the caller reads rowsText alone). Frozen: shared. */
const TEXT_ONLY: JsonRow[] = Object.freeze([]) as unknown as JsonRow[];

/** The wrap around one row's text that makes `frame`'s answer (the array's brackets inside the frame): one object per frame. */
const wraps = new WeakMap<RowsFrame, AnswerWrap>();
const NO_FRAME: AnswerWrap = Object.freeze({ before: '[', after: ']' });

function arrayWrap(frame: RowsFrame | undefined): AnswerWrap {
  if (frame === undefined) return NO_FRAME;
  let wrap = wraps.get(frame);
  if (wrap === undefined) wraps.set(frame, (wrap = Object.freeze({ before: `${frame.before}[`, after: `]${frame.after}` })));
  return wrap;
}

/**
 * Whether a key expression's value may differ for the same parameter text from one read to the next:
 * a date or timestamp made from text ('today', 'now', 'tomorrow' move with the clock; a timestamptz
 * reads its text in the session's time zone), anywhere along its casts. Such a key is made anew each read.
 */
function clockDependent(expr: Expr): boolean {
  const type = expr.type.name;
  if (type === 'date' || type === 'timestamp' || type === 'timestamptz') return true;
  return expr.kind === 'cast' && clockDependent(expr.arg);
}

/**
 * A key value as compile.ts evaluates it, for the expressions a statement's key is made of: a
 * constant, a parameter, a cast of one. null: another kind (the general path runs).
 */
function keyValueOf(expr: Expr): ((params: readonly QValue[]) => QValue) | null {
  switch (expr.kind) {
    case 'const': {
      const value = expr.value;
      return () => value;
    }
    case 'param': {
      const index = expr.index;
      return (params) => {
        if (index >= params.length) throw missingParameter(index);
        return params[index]!;
      };
    }
    case 'cast': {
      const arg = keyValueOf(expr.arg);
      if (arg === null) return null;
      const cast = expr.cast;
      return (params) => {
        const v = arg(params);
        return v === null ? null : cast(v);
      };
    }
    default:
      return null;
  }
}
