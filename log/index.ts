/** The log layer's public interface: svcdb's segmented, CRC'd, group-committed write-ahead log. */
export { openLog } from './log.js';
export { repairLog } from './repair.js';
export { inspectLogDir, listSegments } from './inspect.js';
export { LOG_LIMITS } from './limits.js';
export type { AppendResult, Log, LogDirSummary, LogEntry, LogOptions, LogStats, ReadOptions, RecoveryReport, RepairReport, SegmentInfo } from './types.js';
