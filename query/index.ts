/** Public interface of query/: the SQL engine. */
export { SqlEngine, type ExecuteOptions, type ReadOnlyReason, type StreamOptions, type TransactionRef } from './engine.js';
export type { JsonRow, QueryResult, ResultColumn } from './result.js';
export type { KeyRead, KeyReadResult } from './point-read.js';
export { collectRows, type ResultSummary, type RowStream } from './stream.js';
export { asSvcError } from './failure.js';
export type { SqlEngineDeps } from './statement.js';
export type { ExplainOptionsInput, ExplainResult, PlanNode } from './explain/index.js';
export { DEFAULT_SQL_LIMITS, type SqlLimits } from './limits.js';
export { typeSystem } from './types/index.js';
export { TxnManager, type BeginOptions, type TxnLimits, type TxnManagerDeps } from './txn/manager.js';
export type { TxnCaller, TxnScope } from './txn/scope.js';
export type { TransactionCommitted, TransactionInfo, TransactionRolledBack, TxnFailure } from './txn/info.js';
export { ISOLATION_LEVELS, type IsolationLevel, type TxnStatus } from './txn/txn-state.js';
export { checkExpression, type ExpressionRules } from './filter.js';
export { tokenize, type Token, type TokenKind } from './parse/tokens.js';
export type { JsonConflict, JsonInsert } from './dml/insert-json.js';
export type { CdcRuntime, CdcStreamStatus } from './cdc/runtime.js';
export { statusRow, streamDefs, streamNotFound, streamRow, stateOf } from './cdc/statements.js';
