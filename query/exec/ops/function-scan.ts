import { SvcError } from '../../../core/errors.js';
import type { QType, QValue } from '../../types/contract.js';
import type { Expr } from '../../plan/expr.js';
import type { OutputColumn } from '../../plan/nodes.js';
import { JsonNull } from '../../../core/json-exact.js';
import { compile } from '../compile.js';
import { checkContinue, shouldYield, yieldNow, type Batch, type ExecContext } from '../context.js';
import { prepare } from '../subquery.js';
import { LIMITS } from '../../limits.js';
import type { JsonValue } from '../../../core/values.js';
import { dataError } from '../../types/errors.js';
import { asTopLevel, formatJsonb, isJsonObject, sortedKeys } from '../../types/jsonb.js';
import { jsonbAsText } from '../../functions/jsonb-ops.js';
import { compileRegex, regexOptions } from '../../functions/pattern.js';
import { eachMatch, matchArray, regexpSplit } from '../../functions/fn-regex.js';
import { withDeadline } from '../../functions/regex-guard.js';

/**
 * generate_series(start, stop[, step]) over int4 (numbers) or int8 (bigints): rows are produced
 * a batch at a time, so LIMIT stops it early. A NULL argument gives no rows, as in PostgreSQL.
 */
export async function* generateSeriesOp(ctx: ExecContext, args: readonly Expr[]): AsyncIterable<Batch> {
  const compiled = args.map((e) => compile(e, ctx));
  await prepare(compiled, [], ctx);
  const values = compiled.map((c) => c.eval([]));
  if (values.some((v) => v === null)) return;
  const wide = typeof values[0] === 'bigint';
  const [start, stop, step] = [values[0], values[1], values[2] ?? 1].map((v) => BigInt(v as number | bigint));
  if (step === 0n) throw new SvcError('INVALID_QUERY', 'step size cannot equal zero', {});
  yield* inBatches(ctx, series(start!, stop!, step!, wide));
}

function* series(start: bigint, stop: bigint, step: bigint, wide: boolean): Iterable<QValue> {
  for (let v = start; step > 0n ? v <= stop : v >= stop; v += step) yield wide ? v : Number(v);
}

/** One-column rows of `values`, a batch at a time, yielding the event loop and checking the deadline between batches. */
async function* inBatches(ctx: ExecContext, values: Iterable<QValue>): AsyncIterable<Batch> {
  let batch: Batch = [];
  for (const value of values) {
    batch.push([value]);
    if (batch.length >= LIMITS.batchRows) {
      yield batch;
      batch = [];
      if (shouldYield(ctx)) await yieldNow(ctx);
      checkContinue(ctx);
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * unnest(array): its elements in storage order, a multi-dimensional array flattened as PostgreSQL
 * does (nested JS arrays), except where an element is itself a JS array value (jsonb).
 * A NULL array gives no rows.
 */
export async function* unnestOp(ctx: ExecContext, arg: Expr, elementType: QType): AsyncIterable<Batch> {
  const compiled = compile(arg, ctx);
  await prepare([compiled], [], ctx);
  const value = compiled.eval([]);
  if (value === null) return;
  const deep = elementType.name !== 'jsonb';
  const elements = deep ? (value as unknown[]).flat(Infinity) : (value as unknown[]);
  yield* inBatches(ctx, elements as QValue[]);
}

type JsonbSetFunction = 'jsonb_array_elements' | 'jsonb_array_elements_text' | 'jsonb_each' | 'jsonb_each_text' | 'jsonb_object_keys';

/** The rows of a jsonb set-returning function over one value (PostgreSQL's errors for the wrong kind of value); a JSON null member is the jsonb null. */
function jsonbRows(fn: JsonbSetFunction, value: JsonValue): QValue[][] {
  const kind = Array.isArray(value) ? 'an array' : isJsonObject(value) ? 'an object' : 'a scalar';
  if (fn === 'jsonb_array_elements' || fn === 'jsonb_array_elements_text') {
    if (!Array.isArray(value)) throw dataError(`cannot extract elements from ${kind.replace('an array', 'an object')}`);
    return value.map((v) => [fn === 'jsonb_array_elements' ? (asTopLevel(v) as QValue) : jsonbAsText(v)]);
  }
  if (!isJsonObject(value)) {
    throw dataError(fn === 'jsonb_object_keys' ? `cannot call ${fn} on ${kind}` : `cannot call ${fn} on a non-object`);
  }
  const keys = sortedKeys(value);
  if (fn === 'jsonb_object_keys') return keys.map((k) => [k]);
  return keys.map((k) => [k, fn === 'jsonb_each' ? (asTopLevel(value[k]!) as QValue) : jsonbAsText(value[k])]);
}

/**
 * A field of PostgreSQL's record text (record_out): empty for NULL; double-quoted, with quotes and
 * backslashes doubled, when empty or holding a quote, backslash, parenthesis, comma or space.
 */
function recordField(v: string | null): string {
  if (v === null) return '';
  return v === '' || /[",\\() \t\n\r\v\f]/.test(v) ? `"${v.replace(/["\\]/g, '$&$&')}"` : v;
}

/** jsonb_each[_text]'s row as the record text `(key,value)` (a select list's whole item: svcdb has no record values). */
function recordRow([key, value]: QValue[], jsonb: boolean): QValue[] {
  const text = jsonb ? formatJsonb(value as JsonValue) : (value as string | null);
  return [`(${recordField(key as string)},${recordField(text)})`];
}

/** jsonb_array_elements[_text], jsonb_each[_text], jsonb_object_keys: a NULL argument gives no rows. */
export async function* jsonbSetOp(ctx: ExecContext, fn: JsonbSetFunction, arg: Expr, record = false): AsyncIterable<Batch> {
  const compiled = compile(arg, ctx);
  await prepare([compiled], [], ctx);
  const value = compiled.eval([]);
  if (value === null) return;
  const pairs = jsonbRows(fn, value as JsonValue);
  const rows = record ? pairs.map((pair) => recordRow(pair, fn === 'jsonb_each')) : pairs;
  for (let i = 0; i < rows.length; i += LIMITS.batchRows) {
    yield rows.slice(i, i + LIMITS.batchRows);
    checkContinue(ctx);
  }
}

/**
 * ROWS FROM (f, g, …): row i holds each function's i-th row side by side; a function that has
 * ended gives NULLs, and the rows end with the longest (PostgreSQL 10+'s lockstep). The inputs
 * are pulled a batch at a time, so LIMIT still stops an endless series.
 */
export async function* rowsFromOp(ctx: ExecContext, inputs: readonly AsyncIterable<Batch>[], widths: readonly number[]): AsyncIterable<Batch> {
  const iterators = inputs.map((input) => input[Symbol.asyncIterator]());
  const pending: (Batch | null)[] = inputs.map(() => []);
  const at = inputs.map(() => 0);
  try {
    for (;;) {
      // Refill each live input whose batch is used up; null marks an input that has ended.
      for (let i = 0; i < iterators.length; i++) {
        while (pending[i] !== null && at[i]! >= pending[i]!.length) {
          const next = await iterators[i]!.next();
          pending[i] = next.done ? null : next.value;
          at[i] = 0;
        }
      }
      let take = Infinity;
      for (let i = 0; i < pending.length; i++) if (pending[i] !== null) take = Math.min(take, pending[i]!.length - at[i]!);
      if (take === Infinity) return;
      const batch: Batch = [];
      for (let r = 0; r < take; r++) {
        const row: QValue[] = [];
        for (let i = 0; i < pending.length; i++) {
          const rows = pending[i]!;
          if (rows === null) for (let c = 0; c < widths[i]!; c++) row.push(null);
          else row.push(...rows[at[i]! + r]!);
        }
        batch.push(row);
      }
      for (let i = 0; i < pending.length; i++) at[i] = at[i]! + take;
      yield batch;
      checkContinue(ctx);
    }
  } finally {
    // Leaving early (LIMIT) closes the functions still running.
    for (let i = 0; i < iterators.length; i++) if (pending[i] !== null) await iterators[i]!.return?.();
  }
}

/**
 * regexp_matches(string, pattern [, flags]): each match as a text[] of its capture groups (a group
 * that took no part is NULL), or of the whole match when the pattern has none; without flag g
 * only the first match. regexp_split_to_table(string, pattern [, flags]): the pieces between
 * matches. A NULL argument gives no rows. The matching is functions/fn-regex.ts's, with the
 * statement's deadline (a match that may backtrack stops there: functions/regex-guard.ts).
 */
export async function* regexpSetOp(ctx: ExecContext, fn: 'regexp_matches' | 'regexp_split_to_table', args: readonly Expr[]): AsyncIterable<Batch> {
  const compiled = args.map((e) => compile(e, ctx));
  await prepare(compiled, [], ctx);
  const values = compiled.map((c) => c.eval([]));
  if (values.some((v) => v === null)) return;
  const [text, pattern, flags = ''] = values as string[];
  if (fn === 'regexp_split_to_table') {
    yield* inBatches(
      ctx,
      withDeadline(ctx.deadlineMs, () => regexpSplit(text!, pattern!, flags!, fn)),
    );
    return;
  }
  const { cflags, global } = regexOptions(flags!, fn, true);
  const re = compileRegex(pattern!, cflags);
  const rows: QValue[] = [];
  withDeadline(ctx.deadlineMs, () =>
    eachMatch(re, text!, 0, true, (m) => {
      rows.push(matchArray(m));
      return global;
    }),
  );
  yield* inBatches(ctx, rows);
}

/**
 * jsonb_to_record(object) (one row; a NULL argument gives a row of NULLs) and
 * jsonb_to_recordset(array of objects) (a row per object; NULL gives none): each column is the
 * member of its name, a JSON null or a missing member NULL, jsonb columns the member as it is,
 * array columns from a JSON array, other types from the member's text by the type's input (a
 * string's own text: '"5"' reads as 5 into an integer, 5.5 is an error there, as in PostgreSQL).
 */
export async function* jsonbToRecordOp(
  ctx: ExecContext,
  fn: 'jsonb_to_record' | 'jsonb_to_recordset',
  arg: Expr,
  columns: readonly OutputColumn[],
): AsyncIterable<Batch> {
  const compiled = compile(arg, ctx);
  await prepare([compiled], [], ctx);
  const value = compiled.eval([]) as JsonValue | null;
  let objects: JsonValue[];
  if (fn === 'jsonb_to_record') {
    if (value !== null && !isJsonObject(value)) throw dataError(`cannot call populate_composite on ${Array.isArray(value) ? 'an array' : 'a scalar'}`);
    objects = [value ?? {}];
  } else {
    if (value === null) return;
    if (!Array.isArray(value)) throw dataError('cannot call jsonb_to_recordset on a non-array');
    if (!value.every(isJsonObject)) throw dataError('argument of jsonb_to_recordset must be an array of objects');
    objects = value;
  }
  const rows = objects.map((o) => columns.map((c) => memberValue(ctx, (o as Record<string, JsonValue>)[c.name], c.type)));
  for (let i = 0; i < rows.length; i += LIMITS.batchRows) {
    yield rows.slice(i, i + LIMITS.batchRows);
    checkContinue(ctx);
  }
}

function memberValue(ctx: ExecContext, member: JsonValue | undefined, type: QType): QValue {
  if (member === undefined || member === null || member instanceof JsonNull) return null;
  if (type.name === 'jsonb') return asTopLevel(member) as QValue;
  if (type.name === 'array' && Array.isArray(member)) return ctx.types.fromJson(type, member);
  return ctx.types.parseText(type, jsonbAsText(member) as string);
}
