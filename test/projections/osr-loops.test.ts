import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cleanEnv } from '../helpers/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The child runs the compiled server (`npm test` builds first).
const child = path.join(root, 'dist/test/projections/osr-loops-child.js');

/**
 * The functions whose loops run long in their first call (a bulk record), by V8's names for them
 * and their files (under dist/): each deoptimized at its loop's exit on every later call
 * (docs/decisions.md, "Loops that run long in a function's first call"), and the functions that
 * now hold those loops. By file too: another function of the same name elsewhere is not one of them.
 */
const LONG_LOOPS: readonly { readonly file: string; readonly name: string }[] = [
  { file: 'projections/row-ops.js', name: 'rowRecordShape' },
  { file: 'projections/row-ops.js', name: 'rowKeyBytes' },
  { file: 'projections/row-ops.js', name: 'rowRecordOps' },
  { file: 'projections/row-ops.js', name: 'addRowRecordOps' },
  { file: 'core/log-record-rows.js', name: 'encodeRowRecord' },
  { file: 'core/log-record-rows.js', name: 'writeOps' },
  { file: 'projections/row-key-bounds.js', name: 'appended' },
  { file: 'query/dml/writer.js', name: 'readPrimaryKeys' },
  { file: 'query/dml/writer.js', name: 'slabKeys' },
];
/** A function may deoptimize a few times while V8 learns it; before the fix each named one did 20 to 120 times. */
const DEOPTS_PER_FUNCTION_MAX = 5;

/**
 * The child's stdout: V8's --trace-deopt-verbose lines (--trace-deopt's, each followed by where it
 * deoptimized, which names the file). Deterministic: on-stack replacement compiles synchronously (--no-concurrent-osr).
 */
function runChild(): Promise<string> {
  return new Promise((resolve, reject) => {
    const run = spawn(process.execPath, ['--trace-deopt-verbose', '--no-concurrent-osr', child], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    run.on('error', reject);
    run.on('close', (code, signal) => (code === 0 ? resolve(stdout) : reject(new Error(`the child exited with ${code ?? signal}: ${stderr.slice(-2000)}`))));
  });
}

/** A function's deoptimizations are counted under `file:name`; `?:name` when its file is not known (see deoptsByFunction). */
const UNKNOWN_FILE = '?';

/**
 * Deoptimizations per function, keyed `file:name` (file under dist/), from lines like
 * `[bailout (kind: deopt-eager, reason: …): begin. deoptimizing 0x… <JSFunction name (sfi = 0x…)>, …`
 * and the line after them, `;;; deoptimize at <file:///…/dist/a/b.js:36:22> inlined at <…>`, whose
 * last position is in the deoptimized function itself (the first ones in functions inlined into it).
 * A lazy deoptimization has no position: its file is the one an eager deoptimization of the same
 * function (the same sfi) showed, else unknown.
 */
function deoptsByFunction(trace: string): Map<string, number> {
  const lines = trace.split('\n');
  const fileBySfi = new Map<string, string>();
  const found: { name: string; sfi: string; file: string | null }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const bailout = /^\[bailout \(kind: .*?<JSFunction ([^\s>]*) \(sfi = (0x[0-9a-f]+)\)>/.exec(lines[i]!);
    if (!bailout) continue;
    const positions = /;;; deoptimize at (.*)$/.exec(lines[i + 1] ?? '');
    const outermost = positions ? [...positions[1]!.matchAll(/<([^>]*):\d+:\d+>/g)].at(-1)?.[1] : undefined;
    const file = outermost === undefined ? null : outermost.replace(/^.*\/dist\//, '');
    if (file !== null) fileBySfi.set(bailout[2]!, file);
    found.push({ name: bailout[1]!, sfi: bailout[2]!, file });
  }
  const counts = new Map<string, number>();
  for (const { name, sfi, file } of found) {
    const key = `${file ?? fileBySfi.get(sfi) ?? UNKNOWN_FILE}:${name}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('loops V8 compiles on the stack in a first, long call', () => {
  it('a bulk record first, then single-row and multi-row inserts: no deoptimization per request', { timeout: 60_000 }, async () => {
    // A missing build fails the test: skipping would hide it.
    if (!existsSync(child)) throw new Error(`${child} is missing: run \`npm run build\` first (\`npm test\` does)`);
    const counts = deoptsByFunction(await runChild());
    // The trace is read at all (a server's start deoptimizes something), or this test would prove nothing.
    expect([...counts.values()].reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
    // Files are read from the trace (one of ours is named), and each listed file exists: a moved one would be matched by nothing.
    expect([...counts.keys()].some((key) => /^(core|log|projections|query|protocols)\/[^:]*\.js:/.test(key))).toBe(true);
    expect(LONG_LOOPS.filter(({ file }) => !existsSync(path.join(root, 'dist', file))).map(({ file }) => file)).toEqual([]);
    // A deoptimization whose file is not known counts against every function of its name (it may be one of them).
    const deopts = ({ file, name }: { file: string; name: string }): number =>
      (counts.get(`${file}:${name}`) ?? 0) + (counts.get(`${UNKNOWN_FILE}:${name}`) ?? 0);
    const tooMany = LONG_LOOPS.map((loop) => [`${loop.file}:${loop.name}`, deopts(loop)] as const).filter(([, n]) => n > DEOPTS_PER_FUNCTION_MAX);
    expect(tooMany).toEqual([]);
  });

  it('counts a deoptimization under its function`s file: a function of the same name elsewhere is not one of the loops', () => {
    const bailout = (name: string, sfi: string, kind = 'deopt-eager'): string =>
      `[bailout (kind: ${kind}, reason: wrong map): begin. deoptimizing 0x1 <JSFunction ${name} (sfi = ${sfi})>, 0x2 <Code TURBOFAN>, opt id 1]`;
    const at = (...files: string[]): string => `            ;;; deoptimize at ${files.map((f, i) => `<file:///w/dist/${f}:${i + 1}:2>`).join(' inlined at ')}`;
    const trace = [
      ...Array.from({ length: 9 }, () => [bailout('appended', '0xa'), at('sinks/other.js')]).flat(),
      bailout('appended', '0xb'),
      at('core/inlined.js', 'projections/row-key-bounds.js'),
      bailout('appended', '0xb', 'deopt-lazy'),
      '  reading input frame appended => bytecode_offset=1',
      bailout('appended', '0xc', 'deopt-lazy'),
    ].join('\n');
    expect(Object.fromEntries(deoptsByFunction(trace))).toEqual({ 'sinks/other.js:appended': 9, 'projections/row-key-bounds.js:appended': 2, '?:appended': 1 });
  });
});
