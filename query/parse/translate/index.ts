/** libpg-query's raw parse tree -> svcdb's own AST (query/parse/ast): the only place that reads PostgreSQL's raw nodes. */
export { translateExpr } from './expr.js';
export { explainOptions, translateStatement } from './statement.js';
