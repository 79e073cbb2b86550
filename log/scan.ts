import { open } from 'node:fs/promises';
import { filePosition, lsn, type FilePositionBytes, type Lsn } from '../core/units.js';
import { FrameCursor } from './frame-cursor.js';
import type { FrameStatus } from './frame.js';
import { SparseIndex } from './sparse-index.js';

export type DamageReason = Exclude<FrameStatus, 'ok'> | 'lsn-mismatch';

export interface FrameDamage {
  readonly positionBytes: FilePositionBytes;
  readonly reason: DamageReason;
  /** For messages: what was found there. */
  readonly what: string;
}

export interface SegmentScan {
  /** Last LSN of the valid prefix (baseLsn - 1 when there is none). */
  readonly lastLsn: Lsn;
  /** End of the valid prefix: where a torn tail is cut. */
  readonly validSizeBytes: number;
  readonly fileSizeBytes: number;
  /** Sparse index of the valid prefix. */
  readonly index: SparseIndex;
  /** The first frame that is not a valid record with the next LSN, or null. */
  readonly damage: FrameDamage | null;
  /** With damage: where a valid record was found after it (so it is not a torn tail), else null. */
  readonly validFrameAfterDamage: FilePositionBytes | null;
}

/**
 * Walks every frame of a segment, checking magic, length, CRC and that LSNs run on from baseLsn.
 * Builds the sparse index on the way. After damage, searches the rest of the file for a valid
 * record, because a torn tail has none, while damage in the middle of a segment does.
 */
export async function scanSegment(path: string, baseLsn: Lsn, indexIntervalBytes: number): Promise<SegmentScan> {
  const fh = await open(path, 'r');
  try {
    const fileSizeBytes = (await fh.stat()).size;
    const cursor = new FrameCursor(fh, fileSizeBytes);
    const index = new SparseIndex(indexIntervalBytes);
    let position = 0;
    let expected: number = baseLsn;
    let damage: FrameDamage | null = null;
    while (position < fileSizeBytes) {
      let status = cursor.frame(position);
      if (status === 'short') status = await cursor.frameAt(position);
      if (status !== 'ok') {
        damage = { positionBytes: filePosition(position), reason: status, what: describeFrameStatus(status, fileSizeBytes - position) };
        break;
      }
      if (cursor.lsn !== expected) {
        damage = {
          positionBytes: filePosition(position),
          reason: 'lsn-mismatch',
          what: `a valid record has LSN ${cursor.lsn} where LSN ${expected} was expected`,
        };
        break;
      }
      index.maybeAdd(expected, position);
      position += cursor.sizeBytes;
      expected++;
    }
    const lastLsn = lsn(expected - 1);
    const validFrameAfterDamage = damage === null ? null : await findValidFrame(cursor, position + 1, lastLsn);
    return { lastLsn, validSizeBytes: position, fileSizeBytes, index, damage, validFrameAfterDamage };
  } finally {
    await fh.close();
  }
}

/** First position at or after from holding a CRC-valid frame with an LSN above afterLsn. */
async function findValidFrame(cursor: FrameCursor, from: number, afterLsn: Lsn): Promise<FilePositionBytes | null> {
  let position = from;
  for (;;) {
    const at = await cursor.findMagic(position);
    if (at < 0) return null;
    if ((await cursor.frameAt(at)) === 'ok' && cursor.lsn > afterLsn) return filePosition(at);
    position = at + 1;
  }
}

/** Words for a damaged frame, for LOG_CORRUPT messages. */
export function describeFrameStatus(status: Exclude<FrameStatus, 'ok'>, bytesLeft?: number): string {
  switch (status) {
    case 'short':
      return `the file ends inside a record${bytesLeft === undefined ? '' : ` (${bytesLeft} bytes left)`}`;
    case 'bad-magic':
      return 'no record starts there (bad magic)';
    case 'bad-length':
      return 'a record length is out of range';
    case 'bad-crc':
      return 'a record fails its CRC32C check';
  }
}
