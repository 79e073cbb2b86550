/**
 * Which change events a webhook receives. `compileFilter` runs when a webhook is registered or
 * changed (its VALIDATION_ERROR refuses the registration, details.field saying which part) and
 * when the tables it follows change; `test` runs per event. An event passes when all hold:
 *
 * - tables: the event's table is one of the webhook's (by table id: a webhook follows ids, so a
 *   rename keeps it and a table dropped and created again under the same name is another table).
 * - operations: the event's operation is listed (INSERT, UPDATE, DELETE, TRUNCATE, SCHEMA_CHANGE;
 *   SNAPSHOT is the CDC streams' initial read, not a change a webhook hears of).
 * - filter.columns (table name → column names): an UPDATE of a listed table passes only when one
 *   of the listed columns changed, by JSON equality of value and old_value (the REST forms, so a
 *   NUMERIC rewritten from 1.5 to 1.50 counts as changed). Other operations, and an UPDATE without
 *   old_value, pass this part.
 * - filter.predicate: a SQL condition on the rows, see predicate.ts (OLD./NEW. as in a trigger's
 *   WHEN; NULL filters out; TRUNCATE and SCHEMA_CHANGE are not tested and pass; a runtime error
 *   throws, so the dispatcher dead-letters the event with it).
 */
import type { TableDef, TableId } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import type { WebhookFilter } from '../../core/webhook.js';
import type { SqlEngine } from '../../query/index.js';
import type { ChangeOperation, JsonObject, SourcedEvent } from '../events/change-event.js';
import { compilePredicate, type CompiledPredicate } from './predicate.js';

/** The operations a webhook may subscribe to. */
export const WEBHOOK_OPERATIONS: readonly ChangeOperation[] = Object.freeze(['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'SCHEMA_CHANGE']);

export interface FilterDeps {
  readonly engine: SqlEngine;
  readonly tenant: string;
}

export interface FilterSpec {
  /** The webhook's tables, as the catalog defines them now. */
  readonly tables: readonly TableDef[];
  readonly operations: readonly string[];
  readonly filter: WebhookFilter | null;
}

export interface EventFilter {
  /** Whether the event is delivered. Rejects (SvcError) when the predicate fails on it: dead-letter it. */
  test(event: SourcedEvent): Promise<boolean>;
}

const FILTER_KEYS = new Set(['columns', 'predicate']);

function invalid(field: string, message: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('VALIDATION_ERROR', `${field}: ${message}`, { field, ...details });
}

/** Compiles a webhook's filters (VALIDATION_ERROR with details.field for bad input). */
export async function compileFilter(deps: FilterDeps, spec: FilterSpec): Promise<EventFilter> {
  const operations = checkOperations(spec.operations);
  const tableIds = new Set<TableId>(spec.tables.map((t) => t.id));
  const filter = checkFilterShape(spec.filter);
  const watched = checkColumns(spec.tables, filter?.columns);
  const predicate: CompiledPredicate | null =
    filter?.predicate === undefined || filter.predicate === null ? null : await compilePredicate(deps, spec.tables, filter.predicate);
  return {
    test(sourced) {
      const event = sourced.event;
      if (!operations.has(event.operation) || !tableIds.has(sourced.table.id)) return Promise.resolve(false);
      if (event.operation === 'UPDATE') {
        const columns = watched.get(sourced.table.id);
        if (columns && !anyChanged(columns, event.value, event.old_value)) return Promise.resolve(false);
      }
      return predicate ? predicate.evaluate(sourced) : Promise.resolve(true);
    },
  };
}

function checkOperations(operations: readonly string[]): ReadonlySet<string> {
  if (!Array.isArray(operations) || operations.length === 0) {
    throw invalid('operations', `give at least one of ${WEBHOOK_OPERATIONS.join(', ')}`);
  }
  for (const op of operations) {
    if (!(WEBHOOK_OPERATIONS as readonly unknown[]).includes(op)) {
      const hint = op === 'SNAPSHOT' ? ' (SNAPSHOT is the initial read of CDC streams, not a change webhooks receive)' : '';
      throw invalid('operations', `unknown operation ${JSON.stringify(op)}: use ${WEBHOOK_OPERATIONS.join(', ')}${hint}`, { operation: op });
    }
  }
  return new Set(operations);
}

function checkFilterShape(filter: WebhookFilter | null | undefined): WebhookFilter | null {
  if (filter === null || filter === undefined) return null;
  if (typeof filter !== 'object' || Array.isArray(filter)) throw invalid('filter', 'is an object with columns and/or predicate');
  for (const key of Object.keys(filter)) {
    if (!FILTER_KEYS.has(key)) throw invalid('filter', `unknown field ${JSON.stringify(key)}: use columns or predicate`, { key });
  }
  return filter;
}

/** A table of the webhook by the name a user gives: `name` or `schema.name`. */
function tableNamed(tables: readonly TableDef[], name: string): TableDef | undefined {
  return tables.find((t) => t.name === name) ?? tables.find((t) => `${t.schema}.${t.name}` === name);
}

/** filter.columns checked against the tables: table id → the columns to watch. */
function checkColumns(tables: readonly TableDef[], columns: WebhookFilter['columns'] | undefined): ReadonlyMap<TableId, readonly string[]> {
  const watched = new Map<TableId, string[]>();
  if (columns === undefined || columns === null) return watched;
  const field = 'filter.columns';
  if (typeof columns !== 'object' || Array.isArray(columns)) throw invalid(field, 'is a map of table name to column names');
  for (const [name, list] of Object.entries(columns)) {
    const table = tableNamed(tables, name);
    if (!table) throw invalid(field, `table "${name}" is not one of the webhook's tables`, { table: name });
    if (!Array.isArray(list) || list.length === 0 || !list.every((c) => typeof c === 'string')) {
      throw invalid(field, `give the columns of table "${name}" as a non-empty list of names`, { table: name });
    }
    for (const column of list) {
      if (!table.columns.some((c) => c.name === column)) {
        throw invalid(field, `table "${name}" has no column "${column}"`, { table: name, column });
      }
    }
    watched.set(table.id, [...(watched.get(table.id) ?? []), ...list]);
  }
  return watched;
}

function anyChanged(columns: readonly string[], value: JsonObject | null, oldValue: JsonObject | null): boolean {
  if (!value || !oldValue) return true;
  return columns.some((c) => !jsonEqual(value[c] ?? null, oldValue[c] ?? null));
}

/** Equality of JSON values (object keys in any order). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((x, i) => jsonEqual(x, other[i]));
  }
  const ka = Object.keys(a);
  const objB = b as Record<string, unknown>;
  if (ka.length !== Object.keys(objB).length) return false;
  return ka.every((k) => Object.hasOwn(objB, k) && jsonEqual((a as Record<string, unknown>)[k], objB[k]));
}
