/**
 * FORMAT AVRO of CDC streams (docs/cdc-avro.md), the one file that imports avsc. Each message is
 * Avro single-object encoded: 0xC3 0x01, the CRC-64-AVRO fingerprint of the writer schema's
 * Parsing Canonical Form (8 bytes, little-endian), then the Avro binary body of the event.
 * One schema per table definition: an event is written with the definition its values were read
 * with (SourcedEvent.table), so after ALTER TABLE new messages carry a new fingerprint and older
 * ones still decode with theirs.
 */
import avsc from 'avsc';
import type { TableDef } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import type { SourcedEvent } from '../events/change-event.js';
import { fingerprintBytes, fingerprintInt64 } from './avro-fingerprint.js';
import { tableLayout, type AvroSchemaJson, type AvroTableLayout } from './avro-schema.js';
import { avroRecordOf, AvroValueError } from './avro-values.js';
import type { EventEncoder } from './destination.js';

/** `avro/binary`: the Avro spec's name for Avro binary payloads (its HTTP transport uses it). */
export const AVRO_CONTENT_TYPE = 'avro/binary';

/** The two marker bytes that open an Avro single-object encoded message. */
export const SINGLE_OBJECT_MAGIC = Buffer.from([0xc3, 0x01]);
/** Marker + fingerprint: the body starts here. */
export const SINGLE_OBJECT_HEADER_BYTES = 10;

/** Schemas kept by their definition's shape; past this, the oldest is built again when next needed. */
export const AVRO_SCHEMA_CACHE_ENTRIES_MAX = 256;

/** What GET /api/v1/cdc/streams/{name}/schema serves for an Avro stream. */
export interface AvroSchemaInfo {
  /** The schema as JSON (the .avsc), with its logical types and column attributes. */
  readonly schema: AvroSchemaJson;
  /** Its Parsing Canonical Form (what the fingerprint is taken of). */
  readonly canonicalForm: string;
  /** CRC-64-AVRO of the canonical form: the 8 header bytes as they appear in a message, hex. */
  readonly fingerprint: string;
  /** The same fingerprint as a signed 64-bit integer (Java's SchemaNormalization.parsingFingerprint64), decimal text. */
  readonly fingerprintInt64: string;
}

/** BIGINT values and sequences are JS bigints: avsc's own long refuses anything past 2^53. */
const BIGINT_LONG = avsc.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (json: number | string) => BigInt(json),
  toJSON: (n: bigint) => (n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(n) : n.toString()),
  isValid: (n: unknown) => typeof n === 'bigint' && BigInt.asIntN(64, n) === n,
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/** Every long of a schema, `"long"` or `{"type":"long", "logicalType": ...}`, as BIGINT_LONG. */
function bigintLongs(schema: unknown): avsc.Type | undefined {
  const isLong = schema === 'long' || (typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'long');
  return isLong ? BIGINT_LONG : undefined;
}

/** An avsc type over `schema`, longs as bigints; logical types read as their underlying type (no conversions). */
export function avroType(schema: AvroSchemaJson): avsc.Type {
  return avsc.Type.forSchema(schema as avsc.Schema, { typeHook: bigintLongs, registry: {}, wrapUnions: false, logicalTypes: {} });
}

/** The schema of one table definition, ready to encode its events. */
export class AvroTableFormat {
  readonly info: AvroSchemaInfo;
  private readonly type: avsc.Type;
  private readonly header: Buffer;

  constructor(readonly layout: AvroTableLayout) {
    this.type = avroType(layout.schema);
    // avsc's schema() without exportAttrs is the Parsing Canonical Form (fullnames, stripped
    // attributes, the spec's key order, no whitespace); the tests hold it to Python's and the spec's.
    const canonicalForm = JSON.stringify(this.type.schema());
    const fingerprint = fingerprintBytes(canonicalForm);
    this.header = Buffer.concat([SINGLE_OBJECT_MAGIC, fingerprint]);
    this.info = {
      schema: layout.schema,
      canonicalForm,
      fingerprint: fingerprint.toString('hex'),
      fingerprintInt64: fingerprintInt64(canonicalForm).toString(),
    };
  }

  /** One single-object encoded message. */
  encode(event: SourcedEvent): Buffer {
    let body: Buffer;
    try {
      body = this.type.toBuffer(avroRecordOf(this.layout, event.event, event.sequence));
    } catch (error) {
      const field = error instanceof AvroValueError ? error.field : undefined;
      throw new SvcError(
        'INTERNAL_ERROR',
        `change event ${event.event.event_id} does not fit the Avro schema of its table`,
        {
          table: event.event.table,
          sequence: event.sequence.toString(),
          field,
          fingerprint: this.info.fingerprint,
        },
        error,
      );
    }
    return Buffer.concat([this.header, body]);
  }
}

/**
 * The formats of table definitions, cached by definition: the same TableDef object is a WeakMap
 * hit; an equal definition read again (another object after a restart) is found by its schema
 * text, which a new definition after ALTER TABLE changes. Bounded; nothing is invalidated by hand.
 */
export class AvroSchemas {
  private readonly byDef = new WeakMap<TableDef, AvroTableFormat>();
  private readonly bySchema = new Map<string, AvroTableFormat>();
  private readonly byFingerprint = new Map<string, AvroTableFormat>();

  constructor(private readonly entriesMax = AVRO_SCHEMA_CACHE_ENTRIES_MAX) {}

  /** The format of a table definition. */
  forTable(table: TableDef): AvroTableFormat {
    const known = this.byDef.get(table);
    if (known) return known;
    const layout = tableLayout(table);
    const text = JSON.stringify(layout.schema);
    let format = this.bySchema.get(text);
    if (!format) {
      format = new AvroTableFormat(layout);
      this.remember(text, format);
    }
    this.byDef.set(table, format);
    return format;
  }

  /** A schema this registry built, by its fingerprint (hex, as in a message header), or null. */
  byFingerprintHex(fingerprint: string): AvroSchemaInfo | null {
    return this.byFingerprint.get(fingerprint.toLowerCase())?.info ?? null;
  }

  private remember(text: string, format: AvroTableFormat): void {
    if (this.bySchema.size >= this.entriesMax) {
      const [oldestText, oldest] = this.bySchema.entries().next().value as [string, AvroTableFormat];
      this.bySchema.delete(oldestText);
      if (this.byFingerprint.get(oldest.info.fingerprint) === oldest) this.byFingerprint.delete(oldest.info.fingerprint);
    }
    this.bySchema.set(text, format);
    this.byFingerprint.set(format.info.fingerprint, format);
  }
}

/** The encoder of FORMAT AVRO streams: each event with the schema of the definition it was read with. */
export function avroEncoder(schemas: AvroSchemas): EventEncoder {
  return {
    contentType: AVRO_CONTENT_TYPE,
    encode: (event) => schemas.forTable(event.table).encode(event),
  };
}
