import type { TableDef } from '../../core/catalog.js';
import { bindDefault, bindExpr, coerce, invalid, Scope } from '../bind/index.js';
import { compile, prepare, type ExecContext } from '../exec/index.js';
import { optimize } from '../optimize/index.js';
import { parseExpression, type QueryExpr, type SqlExpr } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import { pullRows } from '../run-query.js';
import type { QValue } from '../types/contract.js';
import { exprEnv, type DmlRun } from './common.js';
import { LiteralBinder } from './values-literals.js';

/** A value of an INSERT row: an expression or DEFAULT. */
type Cell = Expr | 'default';

/** Per-column defaults of a table: sequence, DEFAULT expression or NULL. */
export function defaultsOf(run: DmlRun, table: TableDef): ((exec: ExecContext) => QValue)[] {
  return table.columns.map((c) => {
    if (c.sequence) {
      const name = c.sequence;
      return () => (c.type.name === 'int8' ? run.writer.nextval(name) : Number(run.writer.nextval(name)));
    }
    if (c.defaultExpr === null) return () => null;
    const expr = bindDefault(run.ctx, table, parseExpression(c.defaultExpr), c.type);
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

/** The rows an INSERT proposes, as full rows in table column order (defaults filled in). */
export async function insertRows(
  run: DmlRun,
  table: TableDef,
  targets: readonly number[],
  source: QueryExpr | null,
  explicitColumns: boolean,
  onRow: (values: QValue[]) => Promise<void> | void,
): Promise<void> {
  const defaults = defaultsOf(run, table);
  if (source === null) {
    await onRow(fullRow(table, new Map(), defaults, run.exec()));
    return;
  }
  if (source.kind === 'values' && isPlainValues(source)) return valuesRows(run, table, targets, source.rows, explicitColumns, defaults, onRow);
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

/** The rows of a plain VALUES list, bound once, then filled row by row (defaults in column order, as fullRow). */
async function valuesRows(
  run: DmlRun,
  table: TableDef,
  targets: readonly number[],
  items: readonly (readonly SqlExpr[])[],
  explicitColumns: boolean,
  defaults: ((exec: ExecContext) => QValue)[],
  onRow: (values: QValue[]) => Promise<void> | void,
): Promise<void> {
  const env = exprEnv(run, new Scope(null), 'VALUES');
  const literals = targets.map((t) => new LiteralBinder(run.ctx, table.columns[t]!.type));
  const rows: Cell[][] = items.map((row) => {
    if (row.length > targets.length) throw invalid('INSERT has more expressions than target columns');
    if (explicitColumns && row.length < targets.length) throw invalid('INSERT has more target columns than expressions');
    return row.map((item, i) =>
      item.kind === 'default' ? 'default' : (literals[i]!.bind(item) ?? coerce(run.ctx, bindExpr(item, env), table.columns[targets[i]!]!.type, 'assignment')),
    );
  });
  const exec = run.exec();
  const width = table.columns.length;
  for (const cells of rows) {
    const values = new Array<QValue | typeof UNSET>(width).fill(UNSET);
    let computed: { target: number; expr: Expr }[] | null = null;
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i]!;
      if (c === 'default') continue;
      // Literals arrive folded to constants (bulk loads are all literals): no compile per cell.
      if (c.kind === 'const') values[targets[i]!] = c.value;
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

function fullRow(table: TableDef, given: Map<number, QValue>, defaults: ((exec: ExecContext) => QValue)[], exec: ExecContext): QValue[] {
  return table.columns.map((_c, i) => (given.has(i) ? given.get(i)! : defaults[i]!(exec)));
}

/** A VALUES list INSERT runs row by row (DEFAULT allowed); one with ORDER BY, LIMIT or WITH runs as a query. */
function isPlainValues(source: QueryExpr): boolean {
  return source.kind === 'values' && !source.with && source.orderBy.length === 0 && source.limit === null && source.offset === null;
}
