/**
 * PostgreSQL's select_common_type (UNION, CASE, COALESCE, IN lists, VALUES, ARRAY[...]):
 * all known types must share a category; the result is the type every other one converts to
 * implicitly, a preferred type winning. All-unknown gives text. Modifiers survive only when all agree.
 */
import type { QType } from './contract.js';
import { canCoerceImplicitly } from './casts.js';
import { baseType, isPreferredType, sameBaseType, sameType, T, typeCategory } from './qtype.js';

export function commonType(types: readonly QType[]): QType | null {
  const known = types.filter((t) => t.name !== 'unknown');
  if (known.length === 0) return types.length === 0 ? null : T.text;
  const first = known[0]!;
  if (known.every((t) => sameType(t, first))) return first;
  let ptype = first;
  for (const t of known.slice(1)) {
    if (sameBaseType(t, ptype)) continue;
    if (typeCategory(t) !== typeCategory(ptype)) return null;
    if (!isPreferredType(ptype) && canCoerceImplicitly(ptype, t) && !canCoerceImplicitly(t, ptype)) ptype = t;
  }
  if (!known.every((t) => sameBaseType(t, ptype) || canCoerceImplicitly(t, ptype))) return null;
  const sameMod = known.every((t) => sameType(t, known[0]!));
  return sameMod ? ptype : baseType(ptype);
}
