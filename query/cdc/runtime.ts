import type { TableDef } from '../../core/catalog.js';
import type { CdcDestination, CdcStreamFilter } from '../../core/cdc-stream.js';

/**
 * What the query layer asks of the running CDC streams (implemented by sinks/, which query/ must
 * not import; the composition root hands it to the engine).
 */

/** A stream's delivery status (SHOW CDC STREAM STATUS, GET /cdc/streams/{name}). */
export interface CdcStreamStatus {
  /** starting | snapshotting | running | paused | failing | stopped (docs/cdc.md: the lifecycle). */
  readonly state: string;
  readonly lastSequence: number | null;
  readonly lastLsn: number | null;
  /** Log records between what was delivered and the durable head. */
  readonly lagRecords: number;
  readonly eventsDelivered: number;
  readonly eventsFiltered: number;
  readonly deliveryErrors: number;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
}

export interface CdcRuntime {
  /** The status of a running stream, or null when none of that name runs. */
  status(tenant: string, name: string): CdcStreamStatus | null;
  /** Refuses (AUTHORIZATION_DENIED) a destination the server's settings do not allow. */
  checkDestination?(destination: CdcDestination): void;
  /** Refuses (VALIDATION_ERROR) a stream filter that does not compile against its table. */
  checkFilter?(tenant: string, table: TableDef, filter: CdcStreamFilter): Promise<void>;
}
