/**
 * Runs a subscription operation as graphql-js's subscribe() does (source stream, then one
 * execution per source value), except for a live query's values: a live query evaluates its whole
 * selection itself (so a change in a related table changes the value it compares), and its value
 * is then the result to send, not a root value to execute the selection on again.
 */
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { createSourceEventStream, execute } from '../graphql-lib.js';

/** A live query's evaluation: the complete result of the operation's one root field. */
export class LiveResult {
  constructor(readonly result: ExecutionResult) {}
}

/** graphql-js subscribe(), with live results passed through as they are. */
export async function subscribeOperation(args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream as ExecutionResult;
  const source = stream as AsyncIterableIterator<unknown>;
  const map = async (value: unknown): Promise<ExecutionResult> => (value instanceof LiveResult ? value.result : await execute({ ...args, rootValue: value }));
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      const step = await source.next();
      return step.done ? { done: true, value: undefined } : { done: false, value: await map(step.value) };
    },
    async return() {
      await source.return?.();
      return { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      await source.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
