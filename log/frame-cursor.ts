import type { FileHandle } from 'node:fs/promises';
import { checkFrame, FRAME_HEADER_BYTES, FRAME_MAGIC, frameLsnAt, framePayloadLengthAt, type FrameStatus } from './frame.js';
import { LOG_LIMITS } from './limits.js';

const EMPTY = Buffer.alloc(0);

/**
 * Parses frames out of large chunks read from one segment file: one read syscall per chunk, not
 * per record. Every fill reads into a fresh buffer (never reused), so payloads handed out as
 * subarrays stay valid for as long as a consumer holds them.
 */
export class FrameCursor {
  private buf: Buffer = EMPTY;
  /** File position of buf[0]. */
  private startBytes = 0;
  private lengthBytes = 0;
  /** Fields of the last frame that frame() found valid. */
  lsn = 0;
  sizeBytes = 0;
  private payloadOffset = 0;
  private payloadLength = 0;

  /** fileSizeBytes bounds reads when known (recovery), so a damaged length never allocates past EOF. */
  constructor(
    private readonly fh: FileHandle,
    private readonly fileSizeBytes: number = Number.POSITIVE_INFINITY,
    private readonly chunkBytes: number = LOG_LIMITS.readChunkBytes,
  ) {}

  /** The frame at position, judged on buffered bytes only ('short' may just mean "fill first"). */
  frame(position: number): FrameStatus {
    const offset = position - this.startBytes;
    if (offset < 0 || offset > this.lengthBytes) return 'short';
    const status = checkFrame(this.buf, offset, this.lengthBytes, LOG_LIMITS.recordPayloadBytesMax);
    if (status === 'ok') {
      this.lsn = frameLsnAt(this.buf, offset);
      this.payloadLength = framePayloadLengthAt(this.buf, offset);
      this.payloadOffset = offset + FRAME_HEADER_BYTES;
      this.sizeBytes = FRAME_HEADER_BYTES + this.payloadLength;
    }
    return status;
  }

  /** Reads the frame at position (filling as needed); 'short' then means the file ends inside it. */
  async frameAt(position: number): Promise<FrameStatus> {
    let status = this.frame(position);
    if (status !== 'short') return status;
    await this.fill(position);
    status = this.frame(position);
    // A frame bigger than a chunk whose header was not buffered before: now that the header is,
    // one more fill reads the whole frame (else a big record would look like a torn one).
    if (status === 'short' && this.lengthBytes >= FRAME_HEADER_BYTES) {
      await this.fill(position);
      status = this.frame(position);
    }
    return status;
  }

  /** True when position is the end of the file (after a fill found nothing there). */
  atEnd(position: number): boolean {
    return position === this.startBytes && this.lengthBytes === 0;
  }

  /** The payload of the last valid frame (a view, not a copy). */
  payload(): Buffer {
    return this.buf.subarray(this.payloadOffset, this.payloadOffset + this.payloadLength);
  }

  /** Drops buffered bytes: they may hold a write that was in flight when they were read. */
  invalidate(): void {
    this.buf = EMPTY;
    this.lengthBytes = 0;
  }

  /** Reads a chunk from position, big enough for the whole frame there when its header is buffered. */
  async fill(position: number): Promise<void> {
    let wantBytes = this.chunkBytes;
    const offset = position - this.startBytes;
    if (offset >= 0 && this.lengthBytes - offset >= FRAME_HEADER_BYTES && this.buf.readUInt32LE(offset) === FRAME_MAGIC) {
      const length = framePayloadLengthAt(this.buf, offset);
      if (length <= LOG_LIMITS.recordPayloadBytesMax) wantBytes = Math.max(wantBytes, FRAME_HEADER_BYTES + length);
    }
    wantBytes = Math.max(0, Math.min(wantBytes, this.fileSizeBytes - position));
    const buf = Buffer.allocUnsafe(wantBytes);
    let filled = 0;
    while (filled < wantBytes) {
      const { bytesRead } = await this.fh.read(buf, filled, wantBytes - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    this.buf = buf;
    this.startBytes = position;
    this.lengthBytes = filled;
  }

  /** Position of the next frame magic at or after position, or -1 (a search for records past damage). */
  async findMagic(position: number): Promise<number> {
    const magic = Buffer.alloc(4);
    magic.writeUInt32LE(FRAME_MAGIC, 0);
    let from = position;
    for (;;) {
      await this.fill(from);
      if (this.lengthBytes === 0) return -1;
      const at = this.buf.subarray(0, this.lengthBytes).indexOf(magic);
      if (at >= 0) return from + at;
      if (this.lengthBytes < magic.length) return -1;
      // Overlap by three bytes so a magic split across two chunks is still found.
      from += this.lengthBytes - (magic.length - 1);
    }
  }
}
