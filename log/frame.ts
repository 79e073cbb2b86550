import { crc32cOf } from './crc32c.js';

/**
 * One record on disk (all integers little-endian):
 *   magic u32 | crc32c u32 | payloadLength u32 | lsn u64 | payload
 * The CRC covers everything after its own field (length, lsn, payload), so a damaged length is
 * detected as surely as a damaged payload. See docs/log-format.md.
 */
export const FRAME_HEADER_BYTES = 20;
/** Bytes 73 76 6c 01 on disk: "svl" and format version 1. */
export const FRAME_MAGIC = 0x016c7673;

const CRC_OFFSET = 4;
const LENGTH_OFFSET = 8;
const LSN_OFFSET = 12;
const TWO_POW_32 = 2 ** 32;

/** short: the buffer ends inside the frame (a torn tail, or more must be read). */
export type FrameStatus = 'ok' | 'short' | 'bad-magic' | 'bad-length' | 'bad-crc';

export function frameSizeBytes(payloadLength: number): number {
  return FRAME_HEADER_BYTES + payloadLength;
}

/** Writes a u64 that is a safe integer (LSNs, file positions) without BigInt. */
export function writeU64(buf: Buffer, offset: number, value: number): void {
  buf.writeUInt32LE(value >>> 0, offset);
  buf.writeUInt32LE(Math.floor(value / TWO_POW_32), offset + 4);
}

export function readU64(buf: Buffer, offset: number): number {
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * TWO_POW_32;
}

/** Encodes one frame at offset (the caller made room); returns the offset after it. */
export function encodeFrame(buf: Buffer, offset: number, lsn: number, payload: Uint8Array): number {
  const end = offset + FRAME_HEADER_BYTES + payload.length;
  buf.writeUInt32LE(FRAME_MAGIC, offset);
  buf.writeUInt32LE(payload.length, offset + LENGTH_OFFSET);
  writeU64(buf, offset + LSN_OFFSET, lsn);
  buf.set(payload, offset + FRAME_HEADER_BYTES);
  buf.writeUInt32LE(crc32cOf(buf, offset + LENGTH_OFFSET, end), offset + CRC_OFFSET);
  return end;
}

/** Checks the frame starting at offset, using only bytes before end. */
export function checkFrame(buf: Buffer, offset: number, end: number, payloadBytesMax: number): FrameStatus {
  if (end - offset < FRAME_HEADER_BYTES) return 'short';
  if (buf.readUInt32LE(offset) !== FRAME_MAGIC) return 'bad-magic';
  const length = buf.readUInt32LE(offset + LENGTH_OFFSET);
  if (length > payloadBytesMax) return 'bad-length';
  const frameEnd = offset + FRAME_HEADER_BYTES + length;
  if (frameEnd > end) return 'short';
  const crc = crc32cOf(buf, offset + LENGTH_OFFSET, frameEnd);
  return crc === buf.readUInt32LE(offset + CRC_OFFSET) ? 'ok' : 'bad-crc';
}

export function frameLsnAt(buf: Buffer, offset: number): number {
  return readU64(buf, offset + LSN_OFFSET);
}

export function framePayloadLengthAt(buf: Buffer, offset: number): number {
  return buf.readUInt32LE(offset + LENGTH_OFFSET);
}
