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
 * The functions whose loops run long in their first call (a bulk record), by V8's names for them:
 * each deoptimized at its loop's exit on every later call (docs/decisions.md, "Loops that run long
 * in a function's first call"), and the functions that now hold those loops.
 */
const LONG_LOOPS = [
  'rowRecordShape',
  'rowKeyBytes',
  'rowRecordOps',
  'addRowRecordOps',
  'encodeRowRecord',
  'writeOps',
  'appended',
  'readPrimaryKeys',
  'slabKeys',
];
/** A function may deoptimize a few times while V8 learns it; before the fix each named one did 20 to 120 times. */
const DEOPTS_PER_FUNCTION_MAX = 5;

/** The child's stdout: V8's --trace-deopt lines. Deterministic: on-stack replacement compiles synchronously (--no-concurrent-osr). */
function runChild(): Promise<string> {
  return new Promise((resolve, reject) => {
    const run = spawn(process.execPath, ['--trace-deopt', '--no-concurrent-osr', child], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    run.on('error', reject);
    run.on('close', (code, signal) => (code === 0 ? resolve(stdout) : reject(new Error(`the child exited with ${code ?? signal}: ${stderr.slice(-2000)}`))));
  });
}

/** Deoptimizations per function name, from lines like `[bailout (kind: deopt-eager, reason: …): begin. deoptimizing 0x… <JSFunction name (sfi = …)>, …`. */
function deoptsByFunction(trace: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of trace.matchAll(/^\[bailout \(kind: [^\n]*?<JSFunction ([^\s>]*)/gm)) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + 1);
  return counts;
}

describe('loops V8 compiles on the stack in a first, long call', () => {
  it('a bulk record first, then single-row and multi-row inserts: no deoptimization per request', { timeout: 60_000 }, async () => {
    // A missing build fails the test: skipping would hide it.
    if (!existsSync(child)) throw new Error(`${child} is missing: run \`npm run build\` first (\`npm test\` does)`);
    const counts = deoptsByFunction(await runChild());
    // The trace is read at all (a server's start deoptimizes something), or this test would prove nothing.
    expect([...counts.values()].reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
    const tooMany = LONG_LOOPS.map((name) => [name, counts.get(name) ?? 0] as const).filter(([, n]) => n > DEOPTS_PER_FUNCTION_MAX);
    expect(tooMany).toEqual([]);
  });
});
