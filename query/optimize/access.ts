import type { IndexDef, TableDef } from '../../core/catalog.js';
import type { QType } from '../types/contract.js';
import type { Expr } from '../plan/expr.js';
import { conjuncts, isStable } from '../plan/expr-util.js';
import type { Access, ScanNode } from '../plan/nodes.js';
import { exprText } from '../plan/expr-text.js';

/** Types whose key encodings are identical, so a value of one bounds a key of the other exactly. */
function encodingFamily(t: QType): string | null {
  switch (t.name) {
    case 'int2':
    case 'int4':
    case 'int8':
      return 'int';
    case 'text':
    case 'varchar':
      return 'text';
    case 'numeric':
    case 'float4':
    case 'float8':
    case 'date':
    case 'timestamp':
    case 'timestamptz':
    case 'uuid':
    case 'bool':
      return t.name;
    default:
      return null;
  }
}

const FLIP: Record<string, string> = { '=': '=', '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

/** A condition `column op value` usable as a key bound. */
interface Sarg {
  readonly column: number;
  readonly op: '=' | '<' | '<=' | '>' | '>=';
  readonly value: Expr;
  readonly source: Expr;
}

function stripIntCast(e: Expr): Expr {
  if (e.kind === 'cast' && e.arg.kind === 'column' && encodingFamily(e.arg.type) === 'int' && encodingFamily(e.type) === 'int') return e.arg;
  return e;
}

export function sargsOf(filter: Expr | null): Sarg[] {
  const out: Sarg[] = [];
  for (const c of conjuncts(filter)) {
    if (c.kind !== 'call' || c.args.length !== 2 || FLIP[c.fn.name] === undefined) continue;
    const a = stripIntCast(c.args[0]!);
    const b = stripIntCast(c.args[1]!);
    let column: Expr;
    let value: Expr;
    let op = c.fn.name;
    if (a.kind === 'column' && isStable(b)) {
      column = a;
      value = b;
    } else if (b.kind === 'column' && isStable(a)) {
      column = b;
      value = a;
      op = FLIP[op]!;
    } else continue;
    const family = encodingFamily(column.type);
    if (family === null || family !== encodingFamily(value.type)) continue;
    out.push({ column: (column as { index: number }).index, op: op as Sarg['op'], value, source: c });
  }
  return out;
}

export interface AccessChoice {
  readonly access: Access;
  readonly rows: number;
  readonly cost: number;
}

/** The cheapest way to read a scan's rows: whole table, or a primary-key / index range. */
export function chooseAccess(scan: ScanNode, rowCount: number): AccessChoice {
  const seq: AccessChoice = { access: { kind: 'seq', reverse: false }, rows: Math.max(1, rowCount * (scan.filter ? 0.33 : 1)), cost: rowCount + 1 };
  const sargs = sargsOf(scan.filter);
  if (sargs.length === 0) return seq;
  let best = seq;
  for (const index of scan.table.indexes) {
    if (index.kind !== 'btree') continue;
    const choice = keyAccess(scan.table, index, sargs, rowCount);
    if (choice && choice.cost < best.cost) best = choice;
  }
  return best;
}

function keyAccess(table: TableDef, index: IndexDef, sargs: readonly Sarg[], rowCount: number): AccessChoice | null {
  const positions = index.columnIds.map((id) => table.columns.findIndex((c) => c.id === id));
  const eq: Expr[] = [];
  const used: Expr[] = [];
  for (const pos of positions) {
    const s = sargs.find((x) => x.column === pos && x.op === '=');
    if (!s) break;
    eq.push(s.value);
    used.push(s.source);
  }
  let lower: { expr: Expr; inclusive: boolean } | null = null;
  let upper: { expr: Expr; inclusive: boolean } | null = null;
  const next = positions[eq.length];
  if (next !== undefined) {
    for (const s of sargs.filter((x) => x.column === next)) {
      if ((s.op === '>' || s.op === '>=') && !lower) {
        lower = { expr: s.value, inclusive: s.op === '>=' };
        used.push(s.source);
      } else if ((s.op === '<' || s.op === '<=') && !upper) {
        upper = { expr: s.value, inclusive: s.op === '<=' };
        used.push(s.source);
      }
    }
  }
  if (eq.length === 0 && !lower && !upper) return null;
  const full = eq.length === positions.length;
  let rows = rowCount;
  if (full && index.unique) rows = 1;
  else rows = rowCount * Math.pow(0.05, eq.length) * (lower && upper ? 0.1 : lower || upper ? 0.3 : 1);
  rows = Math.max(1, rows);
  const perRow = index.primary ? 1 : 3;
  const kind = index.primary ? 'pk' : 'index';
  const condText = used
    .map((u) =>
      exprText(
        u,
        table.columns.map((c) => c.name),
      ),
    )
    .join(' AND ');
  // A point lookup on a unique key never reads more than one row: cheaper than any scan.
  const cost = full && index.unique ? 0.9 : rows * perRow + 2;
  return { access: { kind, index, eq, lower, upper, reverse: false, condText, consumed: used }, rows, cost };
}
