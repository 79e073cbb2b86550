import { SvcError } from '../../core/errors.js';

/**
 * Pinecone metadata filters to SQL over the `metadata` JSONB column. Every key and value is a bound
 * parameter (`$n`), never spliced into the text. `params` is appended to; placeholders continue
 * after what it already holds.
 *
 * - $eq / a bare value: the field equals the value, or (for a list field) contains it (Pinecone's rule);
 * - $ne / $nin: the negation, true for records without the field;
 * - $gt $gte $lt $lte: numbers only; $in: any of a list; $exists: the key is (not) there;
 * - $and / $or: lists of filters; several keys in one object are ANDed.
 */
export function metadataFilterSql(filter: unknown, params: unknown[], field = 'filter'): string {
  return new FilterTranslator(params, field).filter(filter, 0);
}

const DEPTH_MAX = 16;
const OPERANDS_MAX = 1000;
const COMPARISONS: Readonly<Record<string, string>> = Object.freeze({ $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' });

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

class FilterTranslator {
  private operands = 0;

  constructor(
    private readonly params: unknown[],
    private readonly field: string,
  ) {}

  private invalid(message: string): SvcError {
    return new SvcError('VALIDATION_ERROR', `${this.field}: ${message}`, { field: this.field, reason: 'invalid_filter' });
  }

  private param(value: unknown): string {
    if (++this.operands > OPERANDS_MAX) throw this.invalid(`more than ${OPERANDS_MAX} operands`);
    this.params.push(value);
    return `$${this.params.length}`;
  }

  filter(node: unknown, depth: number): string {
    if (depth > DEPTH_MAX) throw this.invalid(`nested deeper than ${DEPTH_MAX} levels`);
    if (!isObject(node)) throw this.invalid('a filter is an object');
    const parts = Object.entries(node).map(([key, value]) => this.clause(key, value, depth));
    return parts.length === 0 ? 'TRUE' : `(${parts.join(' AND ')})`;
  }

  private clause(key: string, value: unknown, depth: number): string {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) throw this.invalid(`${key} takes a non-empty list of filters`);
      return `(${value.map((f) => this.filter(f, depth + 1)).join(key === '$and' ? ' AND ' : ' OR ')})`;
    }
    if (key.startsWith('$')) throw this.invalid(`unknown operator ${key}`);
    if (isScalar(value)) return this.equals(key, value);
    if (!isObject(value) || Object.keys(value).length === 0) throw this.invalid(`the condition on ${key} must be a value or an operator object`);
    return `(${Object.entries(value)
      .map(([op, operand]) => this.condition(key, op, operand))
      .join(' AND ')})`;
  }

  private condition(key: string, op: string, operand: unknown): string {
    switch (op) {
      case '$eq':
        return this.equals(key, this.scalar(op, operand));
      case '$ne':
        return `NOT COALESCE(${this.equals(key, this.scalar(op, operand))}, FALSE)`;
      case '$in':
        return `(${this.list(op, operand)
          .map((v) => this.equals(key, v))
          .join(' OR ')})`;
      case '$nin':
        return `NOT COALESCE(${this.list(op, operand)
          .map((v) => this.equals(key, v))
          .join(' OR ')}, FALSE)`;
      case '$exists':
        if (typeof operand !== 'boolean') throw this.invalid('$exists takes true or false');
        return operand ? `COALESCE(metadata ? ${this.param(key)}, FALSE)` : `NOT COALESCE(metadata ? ${this.param(key)}, FALSE)`;
      default: {
        const sqlOp = COMPARISONS[op];
        if (sqlOp === undefined) throw this.invalid(`unknown operator ${op}`);
        if (typeof operand !== 'number' || !Number.isFinite(operand)) throw this.invalid(`${op} takes a number`);
        const k = this.param(key);
        return `(CASE WHEN jsonb_typeof(metadata -> ${k}) = 'number' THEN CAST(metadata ->> ${k} AS DOUBLE PRECISION) ${sqlOp} ${this.param(operand)} ELSE FALSE END)`;
      }
    }
  }

  /** The field is the value, or a list holding it: two JSONB containments, whole objects as parameters. */
  private equals(key: string, value: Scalar): string {
    return `(metadata @> CAST(${this.param({ [key]: value })} AS jsonb) OR metadata @> CAST(${this.param({ [key]: [value] })} AS jsonb))`;
  }

  private scalar(op: string, operand: unknown): Scalar {
    if (!isScalar(operand)) throw this.invalid(`${op} takes a string, number or boolean`);
    return operand;
  }

  private list(op: string, operand: unknown): Scalar[] {
    if (!Array.isArray(operand) || operand.length === 0 || !operand.every(isScalar))
      throw this.invalid(`${op} takes a non-empty list of strings, numbers or booleans`);
    return operand;
  }
}
