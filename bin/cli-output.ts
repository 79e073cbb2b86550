import { dataDirModePolicy } from '../core/file-modes.js';
import type { InspectReport, ReplayReport } from './app-types.js';

/** `replayed N records in X s (R records/s)` */
export function formatReplay(report: ReplayReport): string {
  const seconds = report.elapsedMs / 1000;
  const rate = seconds > 0 ? Math.round(report.records / seconds) : report.records;
  return `replayed ${report.records} records in ${seconds.toFixed(2)} s (${rate} records/s)`;
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** Rows as aligned columns, each line indented by two spaces. */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map(
    (r) =>
      '  ' +
      r
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
  );
}

/** Readable `svcdb inspect` output. */
export function formatInspect(report: InspectReport): string {
  const lines = [`data dir: ${report.dataDir}`, ...formatModes(report.modes, report.dataDir)];
  const empty = report.segments.length === 0;
  const range = report.lastLsn < report.firstLsn ? 'no records yet' : `LSN ${report.firstLsn}..${report.lastLsn}`;
  lines.push(empty ? 'log: empty' : `log: ${report.segments.length} segment(s), ${range}`);
  if (!empty) {
    lines.push(
      ...columns([
        ['segment', 'base LSN', 'last LSN', 'size'],
        ...report.segments.map((s) => [s.file, String(s.baseLsn), String(s.lastLsn), bytes(s.sizeBytes)]),
      ]),
    );
  }
  if (report.storeLocked) {
    lines.push('consumers and tables: unknown (a running server holds the projection store; ask it, or stop it first)');
    return lines.join('\n');
  }
  lines.push(report.consumers.length === 0 ? 'consumers: none' : 'consumers:');
  if (report.consumers.length > 0) {
    lines.push(
      ...columns([
        ['name', 'offset LSN', 'behind'],
        ...report.consumers.map((c) => [c.name, String(c.offsetLsn), String(Math.max(0, report.lastLsn - c.offsetLsn))]),
      ]),
    );
  }
  lines.push(`tables: ${report.tables}`);
  return lines.join('\n');
}

/** `modes: data dir 0700, 42 entries, none open to group or others` or the entries that are. */
function formatModes(modes: InspectReport['modes'], dataDir: string): string[] {
  const seen = `${modes.entries}${modes.truncated ? '+' : ''} files and directories`;
  if (modes.tooOpenCount === 0) return [`modes: data dir ${modes.dataDirMode}, ${seen}, none open beyond ${modes.allowed}`];
  return [
    `modes: data dir ${modes.dataDirMode}, ${seen}, ${modes.tooOpenCount} open beyond ${modes.allowed} (svcdb serve refuses this; ${dataDirModePolicy(modes.allowed).fixCommand.replace('DIR', dataDir)} fixes it):`,
    ...columns([['path', 'mode'], ...modes.tooOpen.map((e) => [e.path, e.mode])]),
  ];
}

export function formatRepair(result: { bytesTruncated: number; segment: string | null }): string {
  if (result.segment === null || result.bytesTruncated === 0) return 'log is intact; nothing to repair';
  return `truncated ${result.bytesTruncated} bytes at the first corrupt record of segment ${result.segment}`;
}
