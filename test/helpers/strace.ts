/**
 * Reading `strace -f -y -o FILE` output: one event per syscall start and end, in the order strace
 * saw them (it serializes every thread), with the path of the fd (-y) or of a path argument.
 */
export interface SyscallEvent {
  /** Position in the trace: events compare by it. */
  readonly seq: number;
  readonly pid: number;
  readonly name: string;
  readonly phase: 'start' | 'end';
  /** The file the call is about (fd path with -y, or a path argument); '' when none. */
  readonly path: string;
  /** The call's arguments as printed (from its start line). */
  readonly args: string;
  /** The return value (end events); NaN when not a number. */
  readonly result: number;
}

const LINE = /^(\d+)\s+(.*)$/;
const CALL = /^([a-z0-9_]+)\((.*)$/;
const RESUMED = /^<\.\.\. ([a-z0-9_]+) resumed>(.*)$/;
const RESULT = /.*\)\s+=\s+(-?\d+|\?)/; // greedy: the last "= n" of the line

function pathOf(args: string): string {
  const fd = /^-?\d+<([^>]*)>/.exec(args);
  if (fd) return fd[1]!;
  const quoted = /"((?:[^"\\]|\\.)*)"/.exec(args);
  return quoted ? quoted[1]! : '';
}

/** Parses a trace into start/end events; signal and exit lines are skipped. */
export function parseStrace(text: string): SyscallEvent[] {
  const events: SyscallEvent[] = [];
  const pending = new Map<string, { args: string; path: string }>();
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const pid = Number(m[1]);
    const body = m[2]!;
    const resumed = RESUMED.exec(body);
    if (resumed) {
      const name = resumed[1]!;
      const started = pending.get(`${pid}:${name}`) ?? { args: '', path: '' };
      pending.delete(`${pid}:${name}`);
      const r = RESULT.exec(resumed[2]!);
      events.push({ seq: events.length, pid, name, phase: 'end', path: started.path, args: started.args, result: r ? Number(r[1]) : NaN });
      continue;
    }
    const call = CALL.exec(body);
    if (!call) continue; // +++ exited, --- SIG..., and the like
    const name = call[1]!;
    const args = call[2]!;
    const path = pathOf(args);
    events.push({ seq: events.length, pid, name, phase: 'start', path, args, result: NaN });
    if (body.endsWith('<unfinished ...>')) {
      pending.set(`${pid}:${name}`, { args, path });
      continue;
    }
    const r = RESULT.exec(args);
    events.push({ seq: events.length, pid, name, phase: 'end', path, args, result: r ? Number(r[1]) : NaN });
  }
  return events;
}
