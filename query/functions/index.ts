/**
 * The function library: scalar functions and operators (resolveFunction) and aggregates
 * (resolveAggregate), with PostgreSQL 15's overload resolution. The engine reaches it through
 * query/types/index.ts's typeSystem.
 */
import { ARITH_DEFS } from './ops-arith.js';
import { COMPARE_DEFS } from './ops-compare.js';
import { DATETIME_OP_DEFS } from './ops-datetime.js';
import { MISC_OP_DEFS } from './ops-misc.js';
import { TEXT_OP_DEFS } from './ops-text.js';
import { JSONB_OP_DEFS } from './jsonb-ops.js';
import { MATH_FN_DEFS } from './fn-math.js';
import { STRING_FN_DEFS } from './fn-string.js';
import { REGEX_FN_DEFS } from './fn-regex.js';
import { DATETIME_FN_DEFS } from './fn-datetime.js';
import { JSON_FN_DEFS, JSONB_FN_DEFS } from './fn-jsonb.js';
import { MISC_FN_DEFS } from './fn-misc.js';
import { EVERYDAY_FN_DEFS } from './fn-everyday.js';
import { TIMEZONE_FN_DEFS } from './fn-timezone.js';
import { register } from './registry.js';

register([
  ...ARITH_DEFS,
  ...COMPARE_DEFS,
  ...DATETIME_OP_DEFS,
  ...MISC_OP_DEFS,
  ...TEXT_OP_DEFS,
  ...JSONB_OP_DEFS,
  ...MATH_FN_DEFS,
  ...STRING_FN_DEFS,
  ...REGEX_FN_DEFS,
  ...DATETIME_FN_DEFS,
  ...JSONB_FN_DEFS,
  ...JSON_FN_DEFS,
  ...MISC_FN_DEFS,
  ...EVERYDAY_FN_DEFS,
  ...TIMEZONE_FN_DEFS,
]);

export { resolveFunction, hasFunction, isAmbiguous } from './registry.js';
export { resolveAggregate, isAggregateName } from './aggregates.js';
export { toJsonb } from './to-jsonb.js';
