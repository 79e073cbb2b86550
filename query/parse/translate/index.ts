/** libpg-query's raw parse tree -> svcdb's own AST (query/parse/ast): the only place that reads PostgreSQL's raw nodes. */
import { dmlOf } from './dml.js';
import { expressionOf } from './expr.js';
import { queryOf } from './query.js';
import { late } from './recurse.js';

// The translators call each other through recurse.ts (no import cycles): wire them once, here.
late.expr = expressionOf;
late.query = queryOf;
late.dml = dmlOf;

export { translateExpr } from './recurse.js';
export { explainOptions, translateStatement } from './statement.js';
