/**
 * The type system: QTypes, casts, text/JSON I/O, orders and equality keys, and (through
 * query/functions) function, operator and aggregate resolution. The engine core uses only
 * `typeSystem` and the helpers exported here (contract.ts is the agreement).
 */
import { isAmbiguous, resolveAggregate, resolveFunction } from '../functions/index.js';
import { resolveCast } from './casts.js';
import { commonType } from './common-type.js';
import { comparator, hashKey } from './compare.js';
import type { QType, QValue, TypeSystem } from './contract.js';
import { fromJson, toJson } from './json-io.js';
import { formatText, parseText } from './text-io.js';
import { parseTypeName, typeText } from './type-names.js';

export type { AggregateState, CastFn, Interval, QType, QTypeName, QValue, ResolvedAggregate, ResolvedFunction, TypeSystem } from './contract.js';
export {
  arrayOf,
  baseType,
  elementType,
  hasTypmod,
  isArrayType,
  isDateTimeType,
  isFloatType,
  isIntegerType,
  isNumericType,
  isPreferredType,
  isStringType,
  sameBaseType,
  sameType,
  T,
  typeCategory,
  type TypeCategory,
} from './qtype.js';
export { pgTypeName } from './type-names.js';
export { applyTypmod } from './typmod.js';
export { formatInterval, compareInterval } from './interval.js';
export { parseInterval } from './interval-parse.js';

/** PostgreSQL 15 semantics; session time zone UTC; collation C. */
export const typeSystem: TypeSystem = {
  resolveFunction,
  functionIsAmbiguous: isAmbiguous,
  resolveAggregate,
  resolveCast,
  commonType,
  comparator,
  hashKey,
  formatText: (type: QType, value: QValue) => formatText(type, value),
  parseText,
  toJson,
  fromJson,
  typeText,
  parseTypeName,
};
