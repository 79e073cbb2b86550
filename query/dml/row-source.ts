import type { TableDef } from '../../core/catalog.js';
import { bindDefault, bindExpr, coerce, invalid, Scope } from '../bind/index.js';
import { compile, prepare, type ExecContext } from '../exec/index.js';
import { optimize } from '../optimize/index.js';
import { parseExpression, type QueryExpr } from '../parse/index.js';

/** A VALUES list (the source kind isPlainValues accepts). */
export type ValuesSource = Extract<QueryExpr, { kind: 'values' }>;
import type { Expr } from '../plan/expr.js';
import { holdsMomentConstant } from '../plan/expr-util.js';
import { pullRows } from '../run-query.js';
import type { QValue } from '../types/contract.js';
import { exprEnv, type DmlRun } from './common.js';
import { LiteralBinder, NOT_BOUND } from './values-literals.js';

/**
 * Bound DEFAULT expressions by table definition (null: a sequence or no DEFAULT). A definition is
 * never changed (DDL makes a new one), so each is parsed and bound once, not on every INSERT —
 * unless one holds a date/time constant: `DEFAULT 'now'` is read per statement (docs/sql.md), so
 * such a table's defaults are bound again for every statement.
 */
const boundDefaults = new WeakMap<TableDef, readonly (Expr | null)[]>();

function defaultExprs(run: DmlRun, table: TableDef): readonly (Expr | null)[] {
  let found = boundDefaults.get(table);
  if (!found) {
    found = table.columns.map((c) => (c.sequence || c.defaultExpr === null ? null : bindDefault(run.ctx, table, parseExpression(c.defaultExpr), c.type)));
    if (!found.some((e) => e !== null && holdsMomentConstant(e))) boundDefaults.set(table, found);
  }
  return found;
}

/** Per-column defaults of a table: sequence, DEFAULT expression or NULL. */
export function defaultsOf(run: DmlRun, table: TableDef): ((exec: ExecContext) => QValue)[] {
  const exprs = defaultExprs(run, table);
  return table.columns.map((c, i) => {
    if (c.sequence) {
      const name = c.sequence;
      return () => (c.type.name === 'int8' ? run.writer.nextval(name) : Number(run.writer.nextval(name)));
    }
    const expr = exprs[i];
    if (!expr) return () => null;
    let compiled: ReturnType<typeof compile> | null = null;
    return (exec) => {
      compiled ??= compile(expr, exec);
      return compiled.eval([]);
    };
  });
}

/** The DEFAULT of a column as an expression (UPDATE ... SET c = DEFAULT). */
export function defaultExprOf(run: DmlRun, table: TableDef, position: number): Expr {
  const c = table.columns[position]!;
  if (c.sequence) {
    const name = c.sequence;
    const fn = {
      name: 'nextval',
      argTypes: [],
      returnType: c.type,
      strict: false,
      immutable: false,
      impl: () => (c.type.name === 'int8' ? run.writer.nextval(name) : Number(run.writer.nextval(name))),
    };
    return { kind: 'call', type: c.type, fn, args: [], label: 'nextval' };
  }
  if (c.defaultExpr === null) return { kind: 'const', type: c.type, value: null };
  return bindDefault(run.ctx, table, parseExpression(c.defaultExpr), c.type);
}

/** A value of a VALUES row bound for its target column: an expression (coerced) or DEFAULT. */
export type Cell = Expr | 'default';

/** The rows an INSERT proposes, as full rows in table column order (defaults filled in). */
export async function insertRows(
  run: DmlRun,
  table: TableDef,
  targets: readonly number[],
  source: QueryExpr | null,
  explicitColumns: boolean,
  onRow: (values: QValue[]) => Promise<void> | void,
): Promise<void> {
  if (source === null) {
    const defaults = defaultsOf(run, table);
    await onRow(fullRow(table, new Map(), defaults, run.exec()));
    return;
  }
  if (isPlainValues(source)) {
    await valuesRows(run, table, targets, bindValues(run, table, targets, source, explicitColumns), onRow);
    return;
  }
  const defaults = defaultsOf(run, table);
  const query = run.binder.bindQuery(source, new Scope(null));
  const columns = query.plan.columns;
  if (columns.length > targets.length) throw invalid('INSERT has more expressions than target columns');
  if (explicitColumns && columns.length < targets.length) throw invalid('INSERT has more target columns than expressions');
  const casts = columns.map((c, i) =>
    coerce(run.ctx, { kind: 'column', type: c.type, index: i, name: c.name }, table.columns[targets[i]!]!.type, 'assignment'),
  );
  const plan = optimize(query.plan, { types: run.ctx.types, rowCount: (id) => run.view.catalog.table(id)?.stats.rowCount ?? 0 });
  const exec = run.exec();
  const evals = casts.map((c) => compile(c, exec).eval);
  const collected: QValue[][] = [];
  await pullRows(plan, exec, (row) => {
    collected.push(evals.map((f) => f(row)));
    return true;
  });
  for (const values of collected) {
    const given = new Map<number, QValue>(values.map((v, i) => [targets[i]!, v]));
    await onRow(fullRow(table, given, defaults, exec));
  }
}

/** Marks a column no cell of a VALUES row gave (its default fills it). */
const UNSET: unique symbol = Symbol('unset');

/** The cells of a plain VALUES list bound and coerced to their target columns (row by row, DEFAULT allowed). */
export function bindValues(run: DmlRun, table: TableDef, targets: readonly number[], source: ValuesSource, explicitColumns: boolean): Cell[][] {
  const env = exprEnv(run, new Scope(null), 'VALUES');
  // Number literals bound straight to their column's type (values-literals.ts); anything else through the binder.
  const literals = targets.map((t) => new LiteralBinder(run.ctx, table.columns[t]!.type));
  return source.rows.map((items) => {
    if (items.length > targets.length) throw invalid('INSERT has more expressions than target columns');
    if (explicitColumns && items.length < targets.length) throw invalid('INSERT has more target columns than expressions');
    return items.map((item, i) =>
      item.kind === 'default' ? 'default' : (literals[i]!.bind(item) ?? coerce(run.ctx, bindExpr(item, env), table.columns[targets[i]!]!.type, 'assignment')),
    );
  });
}

/** Evaluates bound VALUES cells (bindValues) into full rows, defaults in column order (as fullRow): the same for a fresh and a cached INSERT. */
export async function valuesRows(
  run: DmlRun,
  table: TableDef,
  targets: readonly number[],
  rows: readonly (readonly Cell[])[],
  onRow: (values: QValue[]) => Promise<void> | void,
): Promise<void> {
  const defaults = defaultsOf(run, table);
  const exec = run.exec();
  const width = table.columns.length;
  for (const cells of rows) {
    const values = new Array<QValue | typeof UNSET>(width).fill(UNSET);
    let computed: { target: number; expr: Expr }[] | null = null;
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i]!;
      if (c === 'default') continue;
      // Literals arrive folded to constants (bulk loads are all literals): no compile per cell. A
      // parameter given is its converted value, as its compiled form would read it (a prepared
      // INSERT ... VALUES ($1, $2, $3) compiles nothing); a missing one fails as compiled, in order.
      if (c.kind === 'const') values[targets[i]!] = c.value;
      else if (c.kind === 'param' && c.index < exec.params.length) values[targets[i]!] = exec.params[c.index]!;
      else (computed ??= []).push({ target: targets[i]!, expr: c });
    }
    if (computed !== null) {
      const compiled = computed.map((x) => compile(x.expr, exec));
      await prepare(compiled, [], exec);
      compiled.forEach((c, k) => (values[computed[k]!.target] = c.eval([])));
    }
    for (let i = 0; i < width; i++) if (values[i] === UNSET) values[i] = defaults[i]!(exec);
    const pending = onRow(values as QValue[]);
    if (pending) await pending;
  }
}

/**
 * valuesRows without a promise, for rows whose every cell is a constant, a parameter given or
 * DEFAULT (a prepared `INSERT ... VALUES ($1, $2, $3)`): the same rows with the same values,
 * evaluated in the same order (row by row: its cells, then its defaults in column order). Null,
 * having evaluated nothing, when some cell must be computed (valuesRows then runs). Parameters
 * are read converted (DmlRun.params: no execution context is made for them), and the defaults
 * are made only once a row leaves a column out (a row giving every column needs none).
 */
export function plainValuesRows(run: DmlRun, table: TableDef, targets: readonly number[], rows: readonly (readonly Cell[])[]): QValue[][] | null {
  const params = run.params();
  for (let r = 0; r < rows.length; r++) {
    const cells = rows[r]!;
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i]!;
      if (c !== 'default' && c.kind !== 'const' && (c.kind !== 'param' || c.index >= params.length)) return null;
    }
  }
  const width = table.columns.length;
  let defaults: ((exec: ExecContext) => QValue)[] | null = null;
  const out = new Array<QValue[]>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const cells = rows[r]!;
    const values = new Array<QValue | typeof UNSET>(width).fill(UNSET);
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i]!;
      if (c === 'default') continue;
      values[targets[i]!] = c.kind === 'const' ? c.value : params[(c as Extract<Expr, { kind: 'param' }>).index]!;
    }
    for (let i = 0; i < width; i++) {
      if (values[i] !== UNSET) continue;
      defaults ??= defaultsOf(run, table);
      values[i] = defaults[i]!(run.exec());
    }
    out[r] = values as QValue[];
  }
  return out;
}

/** A cell of a VALUES row bound for one run that binding did not settle to a value: evaluated when the rows are (a parameter, an expression). */
interface OpenCell {
  readonly target: number;
  readonly expr: Expr;
}

/**
 * bindValues then valuesRows for a statement whose binding is not kept (a long VALUES list, which
 * the parse cache does not keep either): every row bound first, then evaluated, in the same order
 * with the same errors, but a literal goes straight into its row's values (LiteralBinder.value)
 * instead of a constant cell per value and a second array per row.
 */
export async function boundValuesRows(
  run: DmlRun,
  table: TableDef,
  targets: readonly number[],
  source: ValuesSource,
  explicitColumns: boolean,
): Promise<QValue[][]> {
  const env = exprEnv(run, new Scope(null), 'VALUES');
  const literals = targets.map((t) => new LiteralBinder(run.ctx, table.columns[t]!.type));
  const width = table.columns.length;
  const rows = new Array<(QValue | typeof UNSET)[]>(source.rows.length);
  let open: Map<number, OpenCell[]> | null = null;
  for (let r = 0; r < rows.length; r++) {
    const items = source.rows[r]!;
    if (items.length > targets.length) throw invalid('INSERT has more expressions than target columns');
    if (explicitColumns && items.length < targets.length) throw invalid('INSERT has more target columns than expressions');
    const values = new Array<QValue | typeof UNSET>(width).fill(UNSET);
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (item.kind === 'default') continue;
      const value = literals[i]!.value(item);
      if (value !== NOT_BOUND) {
        values[targets[i]!] = value;
        continue;
      }
      const cell = coerce(run.ctx, bindExpr(item, env), table.columns[targets[i]!]!.type, 'assignment');
      // A constant is read as valuesRows reads it; the rest is evaluated with the row, in cell order.
      if (cell.kind === 'const') values[targets[i]!] = cell.value;
      else {
        open ??= new Map();
        let cells = open.get(r);
        if (!cells) open.set(r, (cells = []));
        cells.push({ target: targets[i]!, expr: cell });
      }
    }
    rows[r] = values;
  }
  const defaults = defaultsOf(run, table);
  const exec = run.exec();
  for (let r = 0; r < rows.length; r++) {
    const values = rows[r]!;
    const cells = open?.get(r);
    if (cells) await evaluateCells(cells, values, exec);
    for (let i = 0; i < width; i++) if (values[i] === UNSET) values[i] = defaults[i]!(exec);
  }
  return rows as QValue[][];
}

/** The open cells of one row, as valuesRows evaluates them: a given parameter read as it is, the rest compiled and run together. */
async function evaluateCells(cells: readonly OpenCell[], values: (QValue | typeof UNSET)[], exec: ExecContext): Promise<void> {
  let computed: OpenCell[] | null = null;
  for (const c of cells) {
    if (c.expr.kind === 'param' && c.expr.index < exec.params.length) values[c.target] = exec.params[c.expr.index]!;
    else (computed ??= []).push(c);
  }
  if (computed === null) return;
  const compiled = computed.map((x) => compile(x.expr, exec));
  await prepare(compiled, [], exec);
  compiled.forEach((c, k) => (values[computed[k]!.target] = c.eval([])));
}

function fullRow(table: TableDef, given: Map<number, QValue>, defaults: ((exec: ExecContext) => QValue)[], exec: ExecContext): QValue[] {
  return table.columns.map((_c, i) => (given.has(i) ? given.get(i)! : defaults[i]!(exec)));
}

/** A VALUES list INSERT runs row by row (DEFAULT allowed); one with ORDER BY, LIMIT or WITH runs as a query. */
export function isPlainValues(source: QueryExpr): source is ValuesSource {
  return source.kind === 'values' && !source.with && source.orderBy.length === 0 && source.limit === null && source.offset === null;
}
