/** query/bind: names to catalog ids and slots, types through the TypeSystem. */
export { BindContext, invalid, mismatch, relationLabel } from './context.js';
export { asCondition, coerce, callByName, resolveUnknown, sameType, unify } from './coerce.js';
export { bindExpr, type ExprEnv } from './expr.js';
export { bindFunction } from './functions.js';
export { bindFrom, bindValuesRows, joinNode, KEY_COLUMNS, scanOf, type FromDeps } from './from.js';
export { outputName, uniqueNames } from './names.js';
export { renamedColumns, Scope, type ScopeColumn } from './scope.js';
export { QueryBinder, type BoundQuery } from './select.js';
export { bindTypeName } from './type-names.js';
export { bindCheck, bindDefault, tableScope } from './table-expr.js';
