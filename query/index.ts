/** Public interface of query/: the SQL engine. */
export { SqlEngine, type ExecuteOptions } from './engine.js';
export type { QueryResult, ResultColumn } from './result.js';
export type { SqlEngineDeps } from './statement.js';
export type { ExplainOptionsInput, ExplainResult, PlanNode } from './explain/index.js';
export { LIMITS as SQL_LIMITS } from './limits.js';
export { typeSystem } from './types/index.js';
