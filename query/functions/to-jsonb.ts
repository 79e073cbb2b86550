/**
 * to_jsonb: a SQL value as a JSON document, as PostgreSQL converts it (numbers for numeric types,
 * 'NaN'/'Infinity' as strings, timestamps as ISO 8601 text without a zone or with '+00:00',
 * arrays as JSON arrays, anything else as its text). Numbers keep their exact numeric text (core/json-exact.ts).
 */
import { jsonNumber } from '../../core/json-exact.js';
import type { JsonValue } from '../../core/values.js';
import type { QType, QValue } from '../types/contract.js';
import { civilFromDays, formatDate, formatFraction, splitTimestamp, TIMESTAMP_INFINITY, TIMESTAMP_MINUS_INFINITY } from '../types/datetime.js';
import { asElement } from '../types/jsonb.js';
import { elementType } from '../types/qtype.js';
import { formatText } from '../types/text-io.js';

function pad(n: number, w: number): string {
  return String(n).padStart(w, '0');
}

/** PostgreSQL's JSON timestamp text: 'YYYY-MM-DDTHH:MM:SS[.ffffff]' (+ '+00:00' with a zone). */
export function jsonTimestamp(ts: bigint, withZone: boolean): string {
  if (ts === TIMESTAMP_INFINITY) return 'infinity';
  if (ts === TIMESTAMP_MINUS_INFINITY) return '-infinity';
  const { days, timeUs } = splitTimestamp(ts);
  const c = civilFromDays(days);
  const bc = c.year <= 0;
  const totalSec = Number(timeUs / 1_000_000n);
  const time = `${pad(Math.floor(totalSec / 3600), 2)}:${pad(Math.floor((totalSec % 3600) / 60), 2)}:${pad(totalSec % 60, 2)}${formatFraction(Number(timeUs % 1_000_000n))}`;
  return `${pad(bc ? 1 - c.year : c.year, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)}T${time}${withZone ? '+00:00' : ''}${bc ? ' BC' : ''}`;
}

export function toJsonb(type: QType, v: QValue): JsonValue {
  if (v === null) return null;
  switch (type.name) {
    case 'bool':
      return v as boolean;
    case 'int2':
    case 'int4':
      return v as number;
    case 'int8':
      return jsonNumber(String(v as bigint));
    case 'float4':
    case 'float8': {
      const n = v as number;
      return Number.isFinite(n) ? n : formatText(type, n);
    }
    case 'numeric': {
      const text = v as string;
      return text === 'NaN' || text.endsWith('Infinity') ? text : jsonNumber(text);
    }
    case 'jsonb':
      return v as JsonValue;
    case 'timestamp':
      return jsonTimestamp(v as bigint, false);
    case 'timestamptz':
      return jsonTimestamp(v as bigint, true);
    case 'date':
      return formatDate(v as number);
    case 'array': {
      const el = elementType(type);
      const nested = el.name !== 'jsonb';
      const walk = (a: readonly QValue[]): JsonValue[] => a.map((e) => (nested && Array.isArray(e) ? walk(e) : asElement(toJsonb(el, e))));
      return walk(v as readonly QValue[]);
    }
    case 'char':
      return v as string;
    default:
      return formatText(type, v);
  }
}
