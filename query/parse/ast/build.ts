/** Builders of syntax-tree nodes that svcdb writes itself rather than reads from SQL text. */
import type { FuncCall, SqlExpr } from './syntax.js';

/**
 * A plain call `schema.name(args)`: no star, DISTINCT, ORDER BY, FILTER or window, no named
 * arguments. GROUPING(…) (the grammar's own node) and the whole-row objects of to_jsonb(o)
 * (bind/whole-row.ts) are such calls; built in one place so a field added to FuncCall is set once.
 */
export function plainCall(schema: string | null, name: string, args: SqlExpr[], loc: number): FuncCall {
  return {
    kind: 'func',
    name: { schema, name },
    args,
    argNames: null,
    star: false,
    distinct: false,
    orderBy: [],
    withinGroup: [],
    filter: null,
    over: null,
    variadic: false,
    loc,
  };
}
