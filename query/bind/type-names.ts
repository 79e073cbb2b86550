import { isSvcError } from '../../core/errors.js';
import type { QType } from '../types/contract.js';
import type { TypeName } from '../parse/ast/index.js';
import { mismatch, type BindContext } from './context.js';

/** Serial pseudo-types: their storage type (the sequence default is DDL's business). */
const SERIALS: Record<string, string> = { bigserial: 'int8', serial8: 'int8', serial: 'int4', serial4: 'int4', smallserial: 'int2', serial2: 'int2' };

/** A type name as svcdb's type parser reads it: `numeric(10,2)`, `varchar(20)[]`, `vector(3)`. */
export function typeNameText(t: TypeName): string {
  const base = SERIALS[t.name] ?? t.name;
  const modifiers = t.modifiers.length > 0 ? `(${t.modifiers.join(',')})` : '';
  return `${base}${modifiers}${'[]'.repeat(t.arrayBounds)}`;
}

/** The QType of a written type; an unknown name is PostgreSQL's "type ... does not exist". */
export function bindTypeName(ctx: BindContext, t: TypeName): QType {
  if (t.schema !== null && t.schema !== 'pg_catalog' && t.schema !== 'public') throw unknownType(t);
  const text = typeNameText(t);
  try {
    return ctx.types.parseTypeName(text);
  } catch (error) {
    // A known type with a bad modifier says what is wrong with the modifier, as PostgreSQL does.
    if (isSvcError(error) && error.details.sqlstate === '22023') throw error;
    throw unknownType(t);
  }
}

function unknownType(t: TypeName): Error {
  const shown = t.schema === null ? t.name : `${t.schema}.${t.name}`;
  return mismatch(`type "${shown}" does not exist`, { type: shown });
}
