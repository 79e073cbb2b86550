/**
 * A CDC stream's definition: what CREATE CHANGE DATA CAPTURE wrote into the log (a catalog object
 * of kind 'cdc_stream', its definition as JSON). The writer (query/) builds it, the tables
 * projection keeps it, the sinks run it.
 */
import type { TableId } from './catalog.js';
import { SvcError } from './errors.js';

export const CDC_STREAM_OBJECT = 'cdc_stream';
export const CDC_STREAM_DEF_VERSION = 1;

export type CdcDestination =
  { readonly kind: 'kafka'; readonly brokers: string; readonly topic: string } | { readonly kind: 'kinesis'; readonly stream: string; readonly region: string };

export type CdcFormat = 'json' | 'avro';

/** Which events a stream sends (docs/cdc.md, "Filters"); absent parts let everything through. */
export interface CdcStreamFilter {
  /** Operations sent (SNAPSHOT rows are always sent, subject to the predicate). */
  readonly operations?: readonly string[];
  /** An UPDATE is sent only when one of these columns changed. */
  readonly columns?: readonly string[];
  /** A SQL condition as in a webhook's filter: bare names the new row (old for DELETE), OLD.c / NEW.c. */
  readonly predicate?: string;
}

export interface CdcStreamDef {
  readonly version: number;
  /** Unique per creation (a stream dropped and created again under the same name is another). */
  readonly id: string;
  readonly name: string;
  readonly tenant: string;
  readonly tableId: TableId;
  /** The table's name when the stream was created (display only: the stream follows the id). */
  readonly table: string;
  readonly destination: CdcDestination;
  readonly format: CdcFormat;
  readonly snapshot: boolean;
  /** Absent in definitions written before filters existed: no filter. */
  readonly filter?: CdcStreamFilter | null;
  readonly paused: boolean;
  readonly createdAt: string;
}

export function encodeCdcStreamDef(def: CdcStreamDef): string {
  return JSON.stringify(def);
}

export function decodeCdcStreamDef(json: string): CdcStreamDef {
  const def = JSON.parse(json) as CdcStreamDef;
  if (def.version !== CDC_STREAM_DEF_VERSION) {
    throw new SvcError('INTERNAL_ERROR', `CDC stream definition of unknown version ${String(def.version)}`, { version: def.version });
  }
  return def;
}

/** Where a stream sends its events, as one string (SHOW CDC STREAMS' address column). */
export function destinationAddress(destination: CdcDestination): string {
  return destination.kind === 'kafka' ? destination.brokers : destination.stream;
}
