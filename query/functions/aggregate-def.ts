import type { AggregateState, QType, QValue } from '../types/contract.js';
import type { ParamSpec } from './registry.js';

/** An aggregate of the library (aggregates.ts resolves them by PostgreSQL's overload rules). */
export interface AggDef {
  readonly name: string;
  readonly params: readonly ParamSpec[];
  readonly ret: QType | ((p: readonly QType[]) => QType);
  readonly strict?: boolean;
  readonly state: (p: readonly QType[]) => AggregateState;
}

/** A state of one value: `step` folds each row's arguments into it, `result` reads it. */
export function state<S>(init: S, step: (s: S, args: readonly QValue[]) => S, result: (s: S) => QValue): AggregateState {
  let s = init;
  return {
    step: (args) => {
      s = step(s, args);
    },
    result: () => result(s),
  };
}
