/** svcdb's own syntax tree (query/parse/ast): the only tree the binder, DML and DDL read. */
export type * from './syntax.js';
export type * from './statement.js';
