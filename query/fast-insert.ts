import type { Expr } from './plan/expr.js';
import { holdsMomentConstant } from './plan/expr-util.js';
import type { InsertStatement, ParsedStatement } from './parse/index.js';
import type { QueryResult } from './result.js';
import { submitDml, type DmlDeps } from './dml/common.js';
import { bindAndInsert, runBoundValues, type BoundValuesInsert } from './dml/insert.js';
import type { Cell } from './dml/row-source.js';
import { PARSE_CACHE_TEXT_CHARS_MAX } from './parse-cache.js';

/** A statement's binding, for the tenant it was bound in. */
interface Entry {
  readonly tenant: string;
  readonly bound: BoundValuesInsert;
}

/**
 * Prepared INSERT ... VALUES: the binding of a statement sent again (the same text, so the same
 * cached parse) is reused instead of binding it on every run. It is valid while the target name
 * still resolves to the very table definition it was bound against: any DDL on the table (ADD or
 * DROP COLUMN, a constraint, an index, DROP and CREATE again) makes a new definition, and the
 * statement is bound afresh. Only bindings that hold nothing of the run that made them are kept:
 * cells of parameters, literals, casts of those and DEFAULT (defaults, sequences and CHECKs are
 * evaluated per run, as for a fresh binding), RETURNING of plain columns, no ON CONFLICT.
 * Entries hang off the parsed statement (the parse cache bounds them and lets them go).
 */
export class InsertCache {
  private readonly entries = new WeakMap<ParsedStatement, Entry>();
  /** Runs served from a cached binding, and bindings kept (for tests and metrics). */
  readonly counts = { hits: 0, binds: 0 };

  /**
   * True when the statement has a kept binding: its cells are parameters, literals, casts of those or
   * DEFAULT, so running it evaluates no subquery and never looks at a cancel signal (a DEFAULT or a
   * CHECK holds none, as in PostgreSQL); once appended, a write is not cancelled either.
   */
  holds(statement: ParsedStatement): boolean {
    return this.entries.has(statement);
  }

  /** Runs an INSERT statement: from its cached binding when current, else bound now (and kept when it may be). */
  run(statement: ParsedStatement, ast: InsertStatement, deps: DmlDeps): Promise<QueryResult> {
    return submitDml(deps, 'INSERT', (run) => {
      const entry = this.entries.get(statement);
      const tenant = deps.env.tenant;
      if (entry && entry.tenant === tenant && run.ctx.findTable(ast.table.schema, ast.table.name)?.def === entry.bound.table) {
        this.counts.hits += 1;
        // What binding would have inferred for $1..$n: the parameters convert to the same types.
        const { paramTypes } = run.ctx;
        const kept = entry.bound.paramTypes;
        // A plain loop, no closure per run (kept was copied by a spread: it has no holes to skip).
        for (let i = 0; i < kept.length; i++) paramTypes[i] = kept[i];
        paramTypes.length = kept.length;
        return runBoundValues(run, entry.bound);
      }
      // A text the parse cache does not keep (a bulk VALUES list) never comes back as this statement: nothing to keep (bound straight into rows).
      if (statement.text.length > PARSE_CACHE_TEXT_CHARS_MAX) return bindAndInsert(ast, run);
      return bindAndInsert(ast, run, (bound) => {
        if (!reusable(ast, bound)) return;
        this.counts.binds += 1;
        this.entries.set(statement, { tenant, bound });
      });
    });
  }
}

function reusable(ast: InsertStatement, bound: BoundValuesInsert): boolean {
  if (ast.onConflict !== null || bound.conflict !== null) return false;
  if (bound.returning && !bound.returning.exprs.every((e) => e.kind === 'column')) return false;
  return bound.rows.every((row) => row.every(plainCell));
}

/** A cell that needs nothing but the run's parameters: no function, no subquery, nothing tied to the run that bound it. */
function plainCell(cell: Cell): boolean {
  if (cell === 'default') return true;
  return plainExpr(cell);
}

/** Date and time literals may mean the moment they were read ('now', 'today'): folded once, they would be frozen. */
function plainExpr(expr: Expr): boolean {
  if (expr.kind === 'param') return true;
  if (expr.kind === 'const') return !holdsMomentConstant(expr);
  return expr.kind === 'cast' && plainExpr(expr.arg);
}
