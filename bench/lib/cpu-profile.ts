/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and ranks functions by self time, each named by
 * file:line — the TypeScript source's line when dist/ carries a source map beside the .js file.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  /** 0-based. */
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
/** The parts of a .cpuprofile this module reads. */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  /** Microseconds on the monotonic clock (process.hrtime's, on Linux). */
  readonly startTime: number;
  readonly samples: readonly number[];
  /** Microseconds since the previous sample (the first one since startTime). */
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  /** `name (file:line)`; file relative to the repository for our own code. */
  readonly where: string;
  /** Self time (topSelfTime) or total time (topTotalTime). */
  readonly selfMs: number;
  /** Share of the busy samples (idle left out; GC and (program) in), 0..100. */
  readonly percent: number;
}

/** Samples that are no work of the process: left out of the ranking and of the percentages. */
const IDLE = '(idle)';

/**
 * Functions ranked by self time over one or more profiles (a process's threads each write one),
 * `top` of them: microsecond deltas summed per node, then per function. With `window` (monotonic
 * microseconds, as process.hrtime), only the samples taken within it count.
 */
export function topSelfTime(
  profiles: readonly CpuProfile[],
  top: number,
  locate: (frame: CallFrame) => string = (f) => `${f.url}:${f.lineNumber + 1}`,
  window?: { readonly fromUs: number; readonly toUs: number },
): SelfTime[] {
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  for (const profile of profiles) {
    const selfUsByNode = new Map<number, number>();
    let atUs = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      const delta = profile.timeDeltas[i] ?? 0;
      atUs += delta;
      if (window !== undefined && (atUs < window.fromUs || atUs > window.toUs)) continue;
      selfUsByNode.set(profile.samples[i]!, (selfUsByNode.get(profile.samples[i]!) ?? 0) + delta);
    }
    for (const node of profile.nodes) {
      const us = selfUsByNode.get(node.id);
      const frame = node.callFrame;
      if (us === undefined || frame.functionName === IDLE) continue;
      const name = frame.functionName || '(anonymous)';
      const where = frame.url === '' ? name : `${name} (${locate(frame)})`;
      byFunction.set(where, (byFunction.get(where) ?? 0) + us);
      busyUs += us;
    }
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, us]) => ({ where, selfMs: Math.round(us / 100) / 10, percent: busyUs === 0 ? 0 : Math.round((us / busyUs) * 1000) / 10 }));
}

/**
 * Functions ranked by total time (self + callees), counted once per sample however often they
 * recur on its stack, over the frames `keep` accepts (e.g. the repository's own code), `top` of
 * them. `percent` is of the busy samples, as in topSelfTime.
 */
export function topTotalTime(
  profiles: readonly CpuProfile[],
  top: number,
  locate: (frame: CallFrame) => string,
  keep: (located: string) => boolean,
  window?: { readonly fromUs: number; readonly toUs: number },
): SelfTime[] {
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  for (const profile of profiles) {
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const names = new Map<number, string | null>();
    const nameOf = (id: number): string | null => {
      if (!names.has(id)) {
        const frame = nodes.get(id)!.callFrame;
        const located = frame.url === '' ? null : locate(frame);
        names.set(id, located !== null && keep(located) ? `${frame.functionName || '(anonymous)'} (${located})` : null);
      }
      return names.get(id)!;
    };
    let atUs = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      const delta = profile.timeDeltas[i] ?? 0;
      atUs += delta;
      if (window !== undefined && (atUs < window.fromUs || atUs > window.toUs)) continue;
      const sampled = profile.samples[i]!;
      if (nodes.get(sampled)?.callFrame.functionName === IDLE) continue;
      busyUs += delta;
      const seen = new Set<string>();
      for (let id: number | undefined = sampled; id !== undefined; id = parent.get(id)) {
        const name = nameOf(id);
        if (name !== null && !seen.has(name)) {
          seen.add(name);
          byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
        }
      }
    }
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, us]) => ({ where, selfMs: Math.round(us / 100) / 10, percent: busyUs === 0 ? 0 : Math.round((us / busyUs) * 1000) / 10 }));
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes one source-map "mappings" segment (base64 VLQ) into its numbers. */
export function decodeVlq(segment: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = BASE64.indexOf(char);
    if (digit < 0) throw new Error(`not base64 VLQ: ${segment}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    out.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return out;
}

/** For each generated line (0-based), the source and 0-based source line of its first mapped segment. */
export function lineMap(mappings: string): ({ source: number; line: number } | undefined)[] {
  const lines: ({ source: number; line: number } | undefined)[] = [];
  let source = 0;
  let line = 0;
  for (const generated of mappings.split(';')) {
    let first: { source: number; line: number } | undefined;
    for (const segment of generated.split(',')) {
      if (segment === '') continue;
      const fields = decodeVlq(segment);
      if (fields.length < 4) continue;
      source += fields[1]!;
      line += fields[2]!;
      first ??= { source, line };
    }
    lines.push(first);
  }
  return lines;
}

/**
 * A locator for topSelfTime: file:// URLs under `root` become repository-relative, and a dist/
 * .js file with a .js.map beside it is named by its .ts source and line.
 */
export function sourceLocator(root: string): (frame: CallFrame) => string {
  const maps = new Map<string, { sources: string[]; lines: ReturnType<typeof lineMap> } | null>();
  const mapOf = (file: string): { sources: string[]; lines: ReturnType<typeof lineMap> } | null => {
    if (!maps.has(file)) {
      let loaded: { sources: string[]; lines: ReturnType<typeof lineMap> } | null = null;
      if (existsSync(`${file}.map`)) {
        const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[]; mappings: string };
        loaded = { sources: map.sources.map((s) => path.resolve(path.dirname(file), s)), lines: lineMap(map.mappings) };
      }
      maps.set(file, loaded);
    }
    return maps.get(file)!;
  };
  return (frame) => {
    if (!frame.url.startsWith('file://')) return `${frame.url}:${frame.lineNumber + 1}`;
    const file = fileURLToPath(frame.url);
    const mapped = mapOf(file)?.lines[frame.lineNumber];
    const sourceFile = mapped ? mapOf(file)!.sources[mapped.source] : undefined;
    const [shown, line] = sourceFile !== undefined && mapped ? [sourceFile, mapped.line] : [file, frame.lineNumber];
    const relative = path.relative(root, shown);
    const modules = shown.lastIndexOf('/node_modules/');
    const short = !relative.startsWith('..') ? relative : modules >= 0 ? shown.slice(modules + 1) : shown;
    return `${short}:${line + 1}`;
  };
}
