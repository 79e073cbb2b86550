/** The project's sqllogictest runner: parse, format and compare as run.mjs does, on PGlite or svcdb. */
export { parseSlt, appliesTo, hasTopLevelOrderBy, type SltRecord, type QueryRecord, type StatementRecord, type SortMode } from './parse.js';
export { formatValue, formatRows, pgArray, pgJson, type FormatOptions } from './format.js';
export { compareResult, expectedLinesFor, md5OfValues } from './compare.js';
export { POSTGRES_DIALECTS, type EngineResult, type ResultColumn, type SqlEngine } from './engine.js';
export { PgliteEngine } from './pglite-engine.js';
export { SvcdbHttpEngine, requireQueryRoute } from './http-engine.js';
export { portabilityProblems, parsePgArray } from './portability.js';
export { runSltFile, runSltText, describeFailures, type FileReport, type RecordFailure, type RunOptions } from './run-file.js';
