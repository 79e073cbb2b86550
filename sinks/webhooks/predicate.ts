/**
 * A webhook's `filter.predicate`: a SQL boolean condition in PostgreSQL syntax, compiled by svcdb's
 * own SQL engine and evaluated on each change event, as a PostgreSQL trigger's WHEN clause is.
 *
 * Formulation: per table, one statement text with the event's rows as typed parameters,
 *
 *   SELECT (SELECT (<predicate>) FROM (SELECT CAST($1 AS <type>) AS "c1", …) AS "new") AS "ok"
 *   FROM (SELECT CAST($k AS <type>) AS "c1", …) AS "old"
 *
 * A bare name resolves in the innermost scope, the new row; `OLD.c` is a correlated reference to
 * the outer derived table and `NEW.c` names the inner one. Only the columns the predicate's
 * identifiers can name are in the text (fewer parameters to convert: about 5× faster on a
 * 10-column table). The engine caches the plan by text, so the predicate is parsed and bound
 * once; an event costs one execute of a cached plan.
 *
 * Rows: INSERT — new = value, OLD.c is NULL. UPDATE — new = value, old = old_value. DELETE — bare
 * names and NEW.c read the deleted row (old_value), as do OLD.c (PostgreSQL refuses NEW in a DELETE
 * trigger's WHEN; here it reads the only row there is). Values are the events' JSON forms (bigint
 * past 2^53 and numeric as strings, timestamps ISO), converted back by the engine to the column's
 * type. TRUNCATE and SCHEMA_CHANGE have no row: the predicate is not evaluated and they pass.
 *
 * Result: true passes; false and NULL filter the event out.
 * Runtime errors (division by zero, a cast that fails, the time limit): `evaluate` throws the
 * engine's SvcError with details.field 'filter.predicate', and the dispatcher dead-letters the event
 * with that error. A failing WHEN clause aborts the statement in PostgreSQL; filtering the event out
 * silently would hide a bug in the predicate, while a dead letter is visible and can be redelivered
 * once the predicate is fixed.
 *
 * Safety: the text passes checkExpression first (one expression: no `;`, no comment, no $n, no
 * parenthesis closing the generated text, no subquery), so it can only read the event's rows.
 */
import type { TableDef, TableId } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import { sqlTypeText } from '../../core/values.js';
import { checkExpression, tokenize, type SqlEngine } from '../../query/index.js';
import type { SourcedEvent } from '../events/change-event.js';
import { WEBHOOK_LIMITS } from './limits.js';

const FIELD = 'filter.predicate';

export interface PredicateDeps {
  readonly engine: SqlEngine;
  readonly tenant: string;
}

export interface CompiledPredicate {
  /** Whether the event passes; TRUNCATE and SCHEMA_CHANGE always do. Throws SvcError on a runtime error. */
  evaluate(event: SourcedEvent): Promise<boolean>;
}

/** One table definition's statement: its text and the columns whose values are $1.. (new) then (old). */
interface Statement {
  readonly text: string;
  readonly columns: readonly string[];
}

function invalid(message: string, details: Record<string, unknown>, cause?: unknown): SvcError {
  return new SvcError('VALIDATION_ERROR', `${FIELD}: ${message}`, { field: FIELD, ...details }, cause);
}

/** Compiles `text` against every table (VALIDATION_ERROR naming the first it fails on). */
export async function compilePredicate(deps: PredicateDeps, tables: readonly TableDef[], text: unknown): Promise<CompiledPredicate> {
  if (typeof text !== 'string') throw invalid('must be a string: a SQL boolean condition', {});
  const expression = checked(text);
  const names = namesIn(expression);
  const statements = new WeakMap<TableDef, Statement>();
  const compiledFor = new Map<TableId, TableDef>();
  for (const table of tables) {
    const statement = statementFor(table, expression, names, null);
    await validate(deps, table, statement);
    statements.set(table, statement);
    compiledFor.set(table.id, table);
  }
  return {
    async evaluate(event) {
      const { operation } = event.event;
      if (operation === 'TRUNCATE' || operation === 'SCHEMA_CHANGE') return true;
      // An event read with another definition of the table (before or after an ALTER) gets its own
      // text: its own column types, and columns it lacks read as NULL. Not validated here: a
      // predicate that does not bind to it fails as a runtime error.
      let statement = statements.get(event.table);
      if (!statement) {
        statement = statementFor(event.table, expression, names, compiledFor.get(event.table.id) ?? null);
        statements.set(event.table, statement);
      }
      return run(deps, statement, event);
    },
  };
}

/** checkExpression's refusals (INVALID_QUERY, LIMIT_EXCEEDED) as VALIDATION_ERROR of the field. */
function checked(text: string): string {
  try {
    return checkExpression(text, { what: 'predicate', textBytesMax: WEBHOOK_LIMITS.predicateBytesMax, allowSubqueries: false });
  } catch (err) {
    if (!(err instanceof SvcError)) throw err;
    const reason = err.code === 'LIMIT_EXCEEDED' ? 'too_long' : ((err.details as { reason?: unknown }).reason ?? 'syntax');
    throw invalid(err.message, { reason }, err);
  }
}

/**
 * Lower-cased names the predicate's identifiers could refer to: a superset of its columns (a
 * function name or OLD/NEW only adds a column that is not read). Case-insensitive on purpose:
 * a column the binder would find is never left out.
 */
function namesIn(expression: string): ReadonlySet<string> {
  const names = new Set<string>();
  for (const token of tokenize(expression)) {
    if (token.kind === 'ident' || token.kind === 'qident') names.add(token.value.toLowerCase());
  }
  return names;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The statement text of one table definition (see the file header). `compiled`: the definition the
 * predicate was validated with; its columns that `table` lacks (added since) are in the text too,
 * with their values NULL, as PostgreSQL reads a column added after a row was written.
 */
function statementFor(table: TableDef, expression: string, names: ReadonlySet<string>, compiled: TableDef | null): Statement {
  const own = new Set(table.columns.map((c) => c.name));
  const added = compiled ? compiled.columns.filter((c) => !own.has(c.name)) : [];
  const used = [...table.columns, ...added].filter((c) => names.has(c.name.toLowerCase()));
  const side = (first: number): string => {
    if (used.length === 0) return 'SELECT 1 AS "?column?"';
    return `SELECT ${used.map((c, i) => `CAST($${first + i} AS ${sqlTypeText(c.type)}) AS ${quoteIdent(c.name)}`).join(', ')}`;
  };
  const text = `SELECT (SELECT (${expression}) FROM (${side(1)}) AS "new") AS "ok" FROM (${side(used.length + 1)}) AS "old"`;
  return { text, columns: used.map((c) => c.name) };
}

/** Runs the statement once with every value NULL: binding errors and a non-boolean result refuse it. */
async function validate(deps: PredicateDeps, table: TableDef, statement: Statement): Promise<void> {
  let type: string | undefined;
  try {
    const params = new Array<null>(statement.columns.length * 2).fill(null);
    const result = await deps.engine.execute(statement.text, { params, tenant: deps.tenant, timeoutMs: WEBHOOK_LIMITS.predicateTimeoutMs, maxRows: 1 });
    type = result.columns[0]?.type;
  } catch (err) {
    if (!(err instanceof SvcError)) throw err;
    throw invalid(`does not compile against table "${table.name}": ${err.message}`, { table: table.name, reason: err.code }, err);
  }
  if (type !== 'BOOLEAN') {
    throw invalid(`must be a boolean condition; on table "${table.name}" it gives ${String(type)}`, { table: table.name, reason: 'not_boolean', type });
  }
}

type Row = Readonly<Record<string, unknown>> | null;

async function run(deps: PredicateDeps, statement: Statement, sourced: SourcedEvent): Promise<boolean> {
  const event = sourced.event;
  const isDelete = event.operation === 'DELETE';
  const newRow: Row = isDelete ? event.old_value : event.value;
  const oldRow: Row = event.operation === 'INSERT' ? null : event.old_value;
  const { columns } = statement;
  const params = new Array<unknown>(columns.length * 2);
  for (let i = 0; i < columns.length; i++) {
    params[i] = newRow?.[columns[i]!] ?? null;
    params[columns.length + i] = oldRow?.[columns[i]!] ?? null;
  }
  try {
    const result = await deps.engine.execute(statement.text, { params, tenant: deps.tenant, timeoutMs: WEBHOOK_LIMITS.predicateTimeoutMs, maxRows: 1 });
    return result.rows[0]?.ok === true;
  } catch (err) {
    if (!(err instanceof SvcError)) throw err;
    throw new SvcError(
      err.code,
      `${FIELD} failed on event ${event.event_id} of table "${event.table}": ${err.message}`,
      {
        ...err.details,
        field: FIELD,
        table: event.table,
        event_id: event.event_id,
      },
      err,
    );
  }
}
