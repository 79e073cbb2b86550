/** query/exec: operators over row batches. */
export { run } from './build.js';
export { compile, missingParameter, type Compiled, type Evaluator } from './compile.js';
export { checkContinue, type Batch, type ExecContext, type NodeStats, type Row } from './context.js';
export { SnapshotSource, WriteViewSource, type RowSource } from './source.js';
export { pkTypes, indexTypes } from './ops/scan.js';
export { prepare, needsPrepare } from './subquery.js';
