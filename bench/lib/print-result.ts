import { cpus, platform, release, totalmem } from 'node:os';

/** A figure of a result line; a list holds one value per round or sample (null: a side skipped). */
export type BenchValue = string | number | boolean | null | readonly (number | null)[];

/** Fields every benchmark reports; the helper adds machine and date. */
export interface BenchResult {
  readonly bench: string;
  readonly [field: string]: BenchValue;
}

/** The machine a figure was measured on, so figures from different runs can be compared fairly. */
export function machineDescription(): string {
  const cpuList = cpus();
  const model = cpuList[0]?.model.trim() ?? 'unknown cpu';
  const memoryGiB = Math.round(totalmem() / 2 ** 30);
  return `${model} x${cpuList.length}, ${memoryGiB} GiB, ${platform()} ${release()}, node ${process.version}`;
}

/** Prints exactly one JSON line on stdout (progress goes to stderr): the benchmark's result. */
export function printBenchResult(result: BenchResult): void {
  const line = { ...result, machine: machineDescription(), date: new Date().toISOString() };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Progress for humans, on stderr so stdout stays one JSON line. */
export function progress(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Rounds for display without losing meaning (2 decimals). */
export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** A count over a duration in ms, per second (rounded). */
export const perS = (count: number, ms: number): number => Math.round(count / (ms / 1000));

/** The middle value (the upper one of an even count). */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
