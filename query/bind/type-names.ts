import { isSvcError } from '../../core/errors.js';
import type { QType } from '../types/contract.js';
import type { AstNode } from '../parse/index.js';
import { decodedScale, VECTOR_MARKER } from '../parse/index.js';
import { mismatch, type BindContext } from './context.js';

/** SQL text of a node-sql-parser data type (VARCHAR(20), NUMERIC(10,2), INT[], TIMESTAMP WITH TIME ZONE). */
export function astTypeText(target: AstNode): string {
  let text = String(target.dataType ?? '').toLowerCase();
  if (!target.parentheses && typeof target.length === 'number' && (text === 'float' || text === 'int')) {
    // node-sql-parser reads float8 / int4 as FLOAT with length 8, INT with length 4.
    text = `${text}${target.length}`;
  } else if (target.length !== undefined && target.length !== null) {
    text += target.scale !== undefined && target.scale !== null ? `(${target.length},${decodedScale(Number(target.scale))})` : `(${target.length})`;
  }
  const suffix = Array.isArray(target.suffix) ? target.suffix.map((s: unknown) => String(s).toLowerCase()).join(' ') : '';
  if (suffix !== '') text += ` ${suffix}`;
  if (target.array) text += '[]'.repeat(target.array.dimension ?? 1);
  return text;
}

/** The QType of a type node; VECTOR(n) comes back from the preprocessor's marker. */
export function bindTypeName(ctx: BindContext, target: AstNode): QType {
  const text = astTypeText(target);
  if (text.startsWith(VECTOR_MARKER)) {
    const dimension = ctx.vectorDims.shift() ?? null;
    return dimension === null ? { name: 'vector' } : { name: 'vector', dimension };
  }
  if (text === 'bigserial' || text === 'serial8') return { name: 'int8' };
  if (text === 'serial' || text === 'serial4') return { name: 'int4' };
  if (text === 'smallserial' || text === 'serial2') return { name: 'int2' };
  try {
    return ctx.types.parseTypeName(text);
  } catch (error) {
    // A known type with a bad modifier says what is wrong with the modifier, as PostgreSQL does.
    if (isSvcError(error) && error.details.sqlstate === '22023') throw error;
    throw mismatch(`type "${text}" does not exist`, { type: text });
  }
}
