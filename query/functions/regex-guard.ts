/**
 * A regex match that may backtrack, run where V8 can stop it: at its statement's deadline.
 *
 * Why: pattern.ts gives most patterns a form V8 moves to its linear-time engine. What that engine
 * cannot run (a lookaround, a word constraint, a back reference, the n flag's anchors, the d flag,
 * bounds it refuses, text with a lone surrogate) runs on the backtracking engine, where
 * `(?=a)(a+)+$` against 30 a's takes seconds and a few more a's hours. Nothing on the event loop
 * can interrupt a running RegExp, so one statement would stall every request and its timeout_ms
 * would not end it. node's vm can: `script.runInContext(ctx, { timeout })` starts a watchdog
 * thread that terminates the JavaScript running on the isolate at the timeout, mid-match, and
 * throws ERR_SCRIPT_EXECUTION_TIMEOUT. The script here is one call, `run()`, of a closure of ours,
 * so the match itself (and the loop over a function's matches) is what runs under the watchdog.
 * It costs some 70 µs a call (a thread started and joined per call) against ~1 µs for a short
 * match, so only matches that may backtrack take this path, each function's whole walk over its
 * matches as one call. PostgreSQL lets such a match run too, until statement_timeout cancels it
 * (57014); here it fails with the same QUERY_TIMEOUT a statement past its deadline gets.
 *
 * The deadline is the statement's (ExecContext.deadlineMs: timeout_ms, at most
 * SVC_QUERY_TIMEOUT_MS_MAX, or the route's default): query/exec/compile.ts sets it around the
 * evaluation of a call of a regex function (readsDeadline), exec/ops/function-scan.ts around
 * regexp_matches and regexp_split_to_table. Outside a statement's evaluation there is none: the
 * binder folding a call of constants. Such a match gets NO_DEADLINE_MS; past it the fold gives up
 * (its error is left for run time) and the call is evaluated when the statement runs, under the
 * statement's deadline.
 */
import { createContext, Script, type Context } from 'node:vm';
import { SvcError } from '../../core/errors.js';

/**
 * How long a match that may backtrack runs with no statement deadline set (a constant folded by
 * the binder): long enough for any ordinary pattern, short enough that a pattern written to
 * explode costs its statement little before it runs again under its own deadline.
 */
export const NO_DEADLINE_MS = 100;

/** The functions and operators whose evaluation gets the statement's deadline (compile.ts). */
const DEADLINE_FUNCTIONS = new Set([
  '~',
  '!~',
  '~*',
  '!~*',
  'regexp_replace',
  'regexp_match',
  'regexp_like',
  'regexp_count',
  'regexp_instr',
  'regexp_substr',
  'regexp_split_to_array',
]);

/**
 * Whether a call of the function or operator `name` with parameters `params` may run a match that
 * backtracks (and so needs the statement's deadline): substring only in its regex form (text, text).
 */
export function readsDeadline(name: string, params: readonly { readonly name: string }[]): boolean {
  if (name === 'substring') return params.length === 2 && params[1]!.name === 'text';
  return DEADLINE_FUNCTIONS.has(name);
}

/** The deadline (Date.now() value) of the statement being evaluated; 0: none. */
let deadlineMs = 0;

/** Sets the deadline for the evaluation that follows; returns the one before, for leaveDeadline. */
export function enterDeadline(ms: number): number {
  const outer = deadlineMs;
  deadlineMs = ms;
  return outer;
}

/** Puts back the deadline enterDeadline returned (so a fold after the statement sees none). */
export function leaveDeadline(outer: number): void {
  deadlineMs = outer;
}

/** `evaluate()` with the statement deadline `ms` set (exec/ops/function-scan.ts's set-returning regex functions). */
export function withDeadline<T>(ms: number, evaluate: () => T): T {
  const outer = enterDeadline(ms);
  try {
    return evaluate();
  } finally {
    leaveDeadline(outer);
  }
}

/**
 * One context and one script for every guarded run: the script only calls the closure it is
 * given. Made at the first guarded run (a context is a new global object: a process that never
 * needs one, as most never do, does not pay for it).
 */
let sandbox: { readonly box: Context; readonly script: Script } | null = null;

/** Whether a guarded run is under way (a nested one needs no watchdog of its own). */
let running = false;
/** Guarded runs since the process started: tests read it to show which matches take this path. */
let runs = 0;

/** The number of guarded runs so far (test/query/regex-guard.test.ts). */
export function guardedRuns(): number {
  return runs;
}

/**
 * Runs `match` (a regex match, or a walk over a string's matches, that may backtrack) so that it
 * stops at the statement's deadline with QUERY_TIMEOUT. `match` must keep its state in its own
 * variables: stopped, it is stopped anywhere, and no finally of it runs.
 */
export function guarded<T>(match: () => T): T {
  if (running) return match();
  const timeout = deadlineMs === 0 ? NO_DEADLINE_MS : Math.max(1, Math.ceil(deadlineMs - Date.now()));
  runs++;
  sandbox ??= { box: createContext({ run: null }), script: new Script('run()', { filename: 'svcdb-regex-guard.js' }) };
  const { box, script } = sandbox;
  running = true;
  box.run = match;
  try {
    return script.runInContext(box, { timeout, displayErrors: false, breakOnSigint: false }) as T;
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      // exec/context.ts checkContinue's error: the statement ran past its deadline.
      throw new SvcError('QUERY_TIMEOUT', 'canceling statement due to statement timeout', { reason: 'timeout' });
    }
    throw err;
  } finally {
    box.run = null;
    running = false;
  }
}
