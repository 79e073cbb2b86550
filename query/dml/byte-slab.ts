/**
 * Copies many small byte arrays into shared chunks and hands back views of them. A bulk insert
 * keeps every row's key and image until its record is applied: as arrays of their own (an
 * ArrayBuffer and a backing store each) they were most of what each young-generation collection
 * had to copy; as views of a few chunks they are one small object each.
 */
/**
 * Every slab's chunk until its first copy: nothing is ever written into it (a copy into a full
 * chunk takes a new one), so one empty array serves all. A single-row insert's writer makes a
 * slab it never uses: no array (and ArrayBuffer) of its own per statement.
 */
const NO_CHUNK = new Uint8Array(0);

export class ByteSlab {
  private chunk = NO_CHUNK;
  /** The chunk's ArrayBuffer, kept: views are made on it directly (see copyPrefix). */
  private chunkBuffer = this.chunk.buffer;
  private at = 0;

  constructor(
    /** Bytes per chunk. */
    private readonly chunkBytes = SLAB_CHUNK_BYTES_DEFAULT,
  ) {}

  /** `bytes` copied into the current chunk, as a view of it; arrays longer than a sixteenth of a chunk are returned as they are. */
  copy(bytes: Uint8Array): Uint8Array {
    return bytes.length > this.chunkBytes >>> 4 ? bytes : this.copyPrefix(bytes, bytes.length);
  }

  /**
   * The first `length` bytes of `source` (an encoder's scratch buffer) copied into the current
   * chunk, as a view of it; past a sixteenth of a chunk, into an array of their own.
   */
  readonly copyPrefix = (source: Uint8Array, length: number): Uint8Array => {
    if (length > this.chunkBytes >>> 4) return source.slice(0, length);
    if (this.at + length > this.chunk.length) {
      this.chunk = new Uint8Array(this.chunkBytes);
      this.chunkBuffer = this.chunk.buffer;
      this.at = 0;
    }
    const start = this.at;
    const chunk = this.chunk;
    if (length <= 32) for (let i = 0; i < length; i++) chunk[start + i] = source[i]!;
    else chunk.set(source.subarray(0, length), start);
    this.at = start + length;
    // The constructor on the kept buffer, not subarray(): subarray looks up the species
    // constructor for every view (20,000 views per bulk request).
    return new Uint8Array(this.chunkBuffer, start, length);
  };
}

/** 64 KiB: a few dozen chunks for a 10,000-row request, and what a view keeps alive stays small. */
export const SLAB_CHUNK_BYTES_DEFAULT = 64 * 1024;
