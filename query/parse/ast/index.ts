/** svcdb's own syntax tree (query/parse/ast): the only tree the binder, DML and DDL read. */
export type * from './expr.js';
export type * from './query.js';
export type * from './statement.js';
