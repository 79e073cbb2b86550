import type { ReplayProgress } from './app-types.js';

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface ProgressReporter {
  update(progress: ReplayProgress): void;
  /** Draw the last state (TTY) and end the line. */
  done(): void;
}

const BAR_WIDTH = 30;
const TTY_REDRAW_MS = 100;
const PLAIN_LINE_MS = 5_000;

const percentOf = (p: ReplayProgress): number => (p.recordsTotal > 0 ? Math.min(100, Math.floor((p.recordsDone / p.recordsTotal) * 100)) : 100);

const perSecond = (count: number, elapsedMs: number): number => (elapsedMs > 0 ? Math.round(count / (elapsedMs / 1000)) : 0);

/** `[######------]  42%  4200/10000 records  1234 records/s  6170 rows/s` (rows when counted) */
export function progressBar(progress: ReplayProgress, elapsedMs: number): string {
  const percent = percentOf(progress);
  const filled = Math.round((percent / 100) * BAR_WIDTH);
  const rows = progress.rowsDone === undefined ? '' : `  ${perSecond(progress.rowsDone, elapsedMs)} rows/s`;
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}%  ${progress.recordsDone}/${progress.recordsTotal} records  ${perSecond(progress.recordsDone, elapsedMs)} records/s${rows}`;
}

/** A redrawn bar on a terminal; a plain line every few seconds otherwise (logs, CI). */
export function createProgressReporter(stream: ProgressStream, nowMs: () => number = Date.now): ProgressReporter {
  const startMs = nowMs();
  const tty = stream.isTTY === true;
  let lastDrawMs = -Infinity;
  let last: ReplayProgress | undefined;
  return {
    update(progress) {
      last = progress;
      const now = nowMs();
      if (now - lastDrawMs < (tty ? TTY_REDRAW_MS : PLAIN_LINE_MS)) return;
      lastDrawMs = now;
      if (tty) stream.write(`\r${progressBar(progress, now - startMs)}\x1b[K`);
      else {
        const rows = progress.rowsDone === undefined ? '' : `, ${progress.rowsDone} rows`;
        stream.write(`replay: ${progress.recordsDone}/${progress.recordsTotal} records (${percentOf(progress)}%${rows})\n`);
      }
    },
    done() {
      if (tty && last !== undefined) stream.write(`\r${progressBar(last, nowMs() - startMs)}\x1b[K\n`);
    },
  };
}
