/**
 * A CDC destination: where one stream's events go. The runner reads events in sequence order
 * and hands them over a batch at a time; the destination says where to resume after a restart.
 */
import type { SourcePosition } from '../events/event-source.js';
import type { SourcedEvent } from '../events/change-event.js';

/** Where to resume, from what the destination already holds. */
export interface ResumePoint {
  readonly position: SourcePosition;
  /** Events at or after `position` the destination already has (Kafka: per partition). */
  readonly delivered: (event: SourcedEvent) => boolean;
}

export interface Destination {
  /**
   * Connects, and reads back what the destination already holds of this stream: null when it
   * holds nothing the stream can resume from (the runner then uses its local offset).
   */
  open(signal: AbortSignal): Promise<ResumePoint | null>;
  /**
   * Delivers one batch, in order; all or nothing where the destination allows it (Kafka: a transaction).
   * Returning means delivered (the runner then records the batch's position): a destination that did
   * not deliver, an aborted signal included, throws.
   */
  deliver(events: readonly SourcedEvent[], signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Turns an event into the bytes a message carries (JSON, Avro). */
export interface EventEncoder {
  readonly contentType: string;
  encode(event: SourcedEvent): Buffer;
}

export const jsonEncoder: EventEncoder = {
  contentType: 'application/json',
  encode: (event) => Buffer.from(JSON.stringify(event.event)),
};

/** The message key of an event: its primary key as JSON (null: no key). */
export function messageKey(event: SourcedEvent): string | null {
  return event.event.key === null ? null : JSON.stringify(event.event.key);
}
