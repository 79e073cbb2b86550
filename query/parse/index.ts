/** query/parse: SQL text to svcdb's own statements (PostgreSQL's grammar through libpg-query, behind one adapter). */
export type * from './ast/index.js';
export { plainCall } from './ast/build.js';
export { parseExpression, parseSql } from './sql-parser.js';
export { exprSql, quoteIdent, quoteLiteral, renameIdentifier, typeSql, windowSql } from './print.js';
export { lineColumn, syntaxError } from './tokens.js';
