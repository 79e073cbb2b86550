/**
 * Replay's bulk load into a FRESH LevelDB (the rebuild's scratch store). Handing LevelDB a chunk's
 * ops through the binding costs one Node-API call per key on the main thread (two million per
 * million rows with one index: the largest cost left in replay). LevelDB's own recovery does the
 * same inserts in C++: at open it reads every write-ahead file (*.log) numbered at or above the
 * current one and applies the WriteBatch records in it (the file format is LevelDB's documented
 * doc/log_format.md, unchanged since 2011). So replay writes each chunk as such a file, moves the
 * files into the open database's directory and reopens it: in the background once enough are
 * staged (BulkLoader), and before a record the main thread applies itself (a catalog change may
 * read the rows), before an ordinary batch and at the end. Two invariants make the files safe to
 * add while the database is open:
 *  - file numbers far above any LevelDB has given out (it never deletes a *.log numbered at or
 *    above its current one, and marks ours used when it recovers them);
 *  - sequence numbers above every one LevelDB has used: the store counts the ops it has written
 *    (an upper bound: a fresh database starts at 0 and each op takes one), so a bulk-loaded op is
 *    newer than every earlier write of its key, as its place in the log says.
 * The other side of the second: an ordinary write made between append() and ingest() takes a
 * sequence number BELOW the pending files' and loses to them at the ingest, for any key they hold.
 * replay-apply.ts ingests before every ordinary chunk, and what it writes in between (the handoff's
 * meta keys, the probes' deletes) is never in a bulk file; keep it so (the review of session 5
 * showed the loss).
 * Since session 8 the loader first HOLDS the batches in memory (up to heldBytesMax) and finish()
 * writes the store's tables itself from them (replay-direct.ts: no recovery, no level 0, no
 * compaction); the write-ahead files above serve what must be visible before the end (ingest():
 * barriers, vector chunks) and whatever comes past the bound.
 */
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assert, SvcError } from '../core/errors.js';
import { KeySpace } from './keys.js';
import { logFileImage } from './replay-log-image.js';
import { replaceWithTables, type TablesHelper } from './replay-direct.js';
import { BATCH_HEADER_BYTES, BATCH_TAIL_BYTES, copyWithVarint, TAG_PUT, type SortedBatch } from './replay-sort.js';
import type { BulkHost } from './state-store.js';

/** Above the highest file number in the directory: more files than LevelDB creates between two reopens. */
const FILE_NUMBER_GAP = 1_000_000;
/** Between the counted sequence and a bulk batch's: a margin, the count being an upper bound already. */
const SEQUENCE_GAP = 1024;
/** LevelDB's own max_file_size default. */
const DEFAULT_TABLE_BYTES = 2 * 1024 * 1024;

/** When the loader hands staged batches to LevelDB. */
export interface BulkLoaderLimits {
  /** Staged bytes at which an ingest starts in the background, when none is running. */
  readonly ingestBytesMin: number;
  /** Staged bytes at which append() waits for the running ingest and starts the next (bounds level 0 and the disk used). */
  readonly pendingBytesMax: number;
  /** Level-0 tables left at finish() past which the store is compacted first (LevelDB slows writes past 8). */
  readonly levelZeroFilesMax: number;
  /**
   * Bytes of batches kept in memory for finish() to write as the store's tables (replay-direct.ts)
   * instead of staging them for LevelDB's recovery; past it every batch is staged (absent: none is kept).
   */
  readonly heldBytesMax?: number;
  /** The size at which finish() cuts the tables it writes. */
  readonly tableBytes?: number;
  /** Bytes of held batches from which another thread writes part of the tables (replay-direct.ts's default). */
  readonly splitBytesMin?: number;
}

/** Where batches wait, inside the scratch directory (LevelDB ignores names it does not know; a crash leaves it with the scratch). */
export const STAGING_DIR = 'replay-staging';

/** The batches of the next ingest: one write-ahead file each in the staging directory. */
interface Staged {
  readonly files: string[];
  bytes: number;
  /** The probe key of each batch: after the ingest LevelDB must hold every one (it skips a record it cannot read). */
  readonly probes: Uint8Array[];
}

/**
 * Writes packed ops as a LevelDB write-ahead file and has LevelDB recover it (see the file's doc).
 * Batches are staged outside LevelDB's sight; an ingest moves their files in (numbered past
 * LevelDB's) and reopens the database, in the background: later batches are staged meanwhile, so
 * LevelDB's recovery runs beside the decoding instead of after it. One file per batch: recovery
 * fills a new memtable for each file, and a batch's sorted keys go into an empty one in order
 * (several batches in one file made the inserts walk a large skip list: 3-5 times slower); the
 * price is one level-0 table per batch, compacted at the end past a bound (finish()). Everything
 * else that uses the database (run()) waits its turn in one queue with the ingests, so nothing
 * touches it while it is closed and reopened.
 */
export class BulkLoader {
  private staged: Staged | null = null;
  private stagedCount = 0;
  private probeCount = 0;
  /** Ingests and run() tasks, one at a time in the order given. */
  private queue: Promise<void> = Promise.resolve();
  /** Ingests queued and not finished. */
  private ingesting = 0;
  private failure: Error | null = null;
  /** Batches kept for finish() (in order, newer than everything the store holds), while `holding`. */
  private held: SortedBatch[] = [];
  private heldBytes = 0;
  private holdingBatches: boolean;

  constructor(
    private readonly host: BulkHost,
    private readonly limits: BulkLoaderLimits,
    /** Another thread writing part of the tables at finish() (replay's worker). */
    private readonly tablesHelper?: TablesHelper,
  ) {
    this.holdingBatches = (limits.heldBytesMax ?? 0) > 0;
  }

  /** True while appended batches are kept for finish() to write as tables (until the bound is passed). */
  get holding(): boolean {
    return this.holdingBatches;
  }

  /** Bytes of the buffers the held batches keep alive (what the bound limits; tests). */
  heldMemoryBytes(): number {
    return this.held.reduce((sum, batch) => sum + batch.rep.buffer.byteLength, 0);
  }

  /** True when ops were appended that LevelDB has not read yet. */
  get pending(): boolean {
    return this.staged !== null || this.ingesting > 0 || this.held.length > 0;
  }

  /**
   * Adds a worker's batch (replay-sort.ts sortedBatch; its bytes are numbered and completed here) as
   * one atomic batch, visible after the next ingest().
   */
  async append(batch: SortedBatch): Promise<void> {
    if (this.failure !== null) throw this.failure;
    if (batch.count === 0) return;
    if (this.holdingBatches) {
      const kept = rightSized(batch);
      // Counted as held: the whole buffer (a chunk of many updates of few keys keeps far fewer entries than it was sized for).
      if (this.heldBytes + kept.rep.buffer.byteLength <= (this.limits.heldBytesMax ?? 0)) {
        this.held.push(kept);
        this.heldBytes += kept.rep.buffer.byteLength;
        return;
      }
    }
    // Past the bound, the rest of the replay goes through LevelDB's recovery (memory stays bounded).
    this.holdingBatches = false;
    await this.stageHeld();
    await this.stage(batch);
  }

  /** The held batches staged in order (before an ingest that must make them visible, or past the bound). */
  private async stageHeld(): Promise<void> {
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const batch of held) await this.stage(batch);
  }

  private async stage(batch: SortedBatch): Promise<void> {
    const first = this.host.sequence + 1 + SEQUENCE_GAP;
    // A key of its own in each batch, last (it sorts after every other): present after the ingest, the
    // whole batch is (LevelDB applies a batch whole or skips it). Another batch's ops may overwrite any of its own.
    const probe = probeKey(this.probeCount++);
    const rep = numberedBatch(batch, first, probe);
    this.host.sequence = first + batch.count;
    const staged = this.staged ?? (this.staged = { files: [], bytes: 0, probes: [] });
    const image = logFileImage(rep);
    if (this.stagedCount === 0) await mkdir(path.join(this.host.location, STAGING_DIR), { recursive: true });
    const file = path.join(this.host.location, STAGING_DIR, `${this.stagedCount++}.log`);
    await writeFile(file, image);
    staged.files.push(file);
    staged.bytes += image.length;
    staged.probes.push(probe);
    if (staged.bytes >= this.limits.pendingBytesMax && this.ingesting > 0) await this.settled();
    if (staged.bytes >= this.limits.ingestBytesMin && this.ingesting === 0) this.startIngest();
  }

  /** Runs `task` once the database is open and every ingest and task queued before it is done (in order). */
  run(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(() => (this.failure === null ? task() : Promise.reject(this.failure)));
    this.queue = next.catch((error: unknown) => {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    });
    return next;
  }

  /** Makes every appended batch visible (LevelDB recovers them into its tables), after the tasks queued before. */
  async ingest(): Promise<void> {
    await this.stageHeld();
    if (this.staged !== null) this.startIngest();
    await this.settled();
  }

  /**
   * ingest(), then the staging directory goes (the scratch directory becomes the state as it is).
   * Recovery puts every table it writes in level 0, and the compactions LevelDB starts after each
   * reopen are cut short by the next: past `levelZeroFilesMax` tables the store is compacted here,
   * else the first writes after the swap would wait for it (a server's first inserts stalled).
   * With batches held, the store's files are replaced by tables written from them and from what
   * the store holds (replay-direct.ts), after every task queued. Returns the level-0 tables left.
   */
  async finish(): Promise<number> {
    if (this.held.length > 0) {
      await this.settled();
      const runs = this.held.map((batch) => ({ buf: batch.rep, from: BATCH_HEADER_BYTES, end: batch.end }));
      let replaced = false;
      // In the queue: every chunk's summary is written first, and nothing uses the store while it is closed.
      await this.run(async () => {
        const tables = await replaceWithTables(this.host, runs, {
          tableBytes: this.limits.tableBytes ?? DEFAULT_TABLE_BYTES,
          stagingDir: STAGING_DIR,
          // What the store holds is read into memory beside the held batches: within the same bound.
          storeBytesMax: (this.limits.heldBytesMax ?? 0) - this.heldBytes,
          ...(this.tablesHelper === undefined ? {} : { helper: this.tablesHelper }),
          ...(this.limits.splitBytesMin === undefined ? {} : { splitBytesMin: this.limits.splitBytesMin }),
        });
        replaced = tables !== null;
      });
      if (replaced) {
        this.held = [];
        this.heldBytes = 0;
        return this.host.levelZeroFiles();
      }
      // The store (ingested before: barriers, vector chunks, past the bound) holds more than the bound
      // leaves: the held batches go through LevelDB's recovery, as past the bound.
    }
    await this.ingest();
    await rm(path.join(this.host.location, STAGING_DIR), { recursive: true, force: true });
    // Once, at the end: compacting after each ingest rewrote level 1 again each time (more CPU in all).
    if (this.host.levelZeroFiles() > this.limits.levelZeroFilesMax) await this.host.compact();
    return this.host.levelZeroFiles();
  }

  /**
   * Waits until no ingest or task runs, ignoring their failures: a replay that fails must not close
   * the scratch store while a background ingest reopens it (the store would stay open and locked).
   */
  async idle(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.queue;
      await seen;
    } while (seen !== this.queue);
  }

  /** Waits for everything queued; throws the first failure. */
  private async settled(): Promise<void> {
    await this.queue;
    if (this.failure !== null) throw this.failure;
  }

  private startIngest(): void {
    const staged = this.staged;
    if (staged === null) return;
    this.staged = null;
    this.ingesting += 1;
    void this.run(async () => {
      try {
        // Numbered past every file LevelDB has made (it never deletes a *.log at or above its current one), in order.
        const base = (await this.highestFileNumber()) + FILE_NUMBER_GAP;
        for (let i = 0; i < staged.files.length; i++) await rename(staged.files[i]!, path.join(this.host.location, `${base + i}.log`));
        await this.host.reopen();
        this.checkProbes(staged.probes);
        // Ordinary deletes, numbered below the batches staged since: no staged batch holds these keys.
        await this.host.write(staged.probes.map((key) => ({ type: 'del' as const, key })));
      } finally {
        this.ingesting -= 1;
      }
    }).catch(() => undefined); // kept in this.failure: the next append() or ingest() throws it
  }

  private checkProbes(probes: readonly Uint8Array[]): void {
    for (const probe of probes) {
      if (this.host.getSync(probe) === undefined) {
        throw new SvcError('STORAGE_UNAVAILABLE', `LevelDB at ${this.host.location} did not recover a bulk-loaded batch of the replay`, {
          location: this.host.location,
        });
      }
    }
  }

  private async highestFileNumber(): Promise<number> {
    let highest = 0;
    for (const name of await readdir(this.host.location)) {
      const match = /^(?:MANIFEST-)?(\d+)(?:\.\w+)?$/.exec(name);
      if (match) highest = Math.max(highest, Number(match[1]));
    }
    return highest;
  }
}

/** The probe key of batch `n` (KeySpace.ReplayProbe, u32 BE). */
function probeKey(n: number): Uint8Array {
  return Uint8Array.of(KeySpace.ReplayProbe, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** The batch's rep with its sequence and `probe` (a put, empty value) added after its entries; in place. */
function numberedBatch(batch: SortedBatch, sequence: number, probe: Uint8Array): Uint8Array {
  assert(probe.length + 3 <= BATCH_TAIL_BYTES, 'the probe fits the room a worker leaves');
  const { rep } = batch;
  let at = batch.end;
  rep[at++] = TAG_PUT;
  at = copyWithVarint(rep, at, probe, 0, probe.length);
  rep[at++] = 0; // an empty value
  const view = new DataView(rep.buffer, rep.byteOffset);
  view.setUint32(0, sequence % 2 ** 32, true);
  view.setUint32(4, Math.floor(sequence / 2 ** 32), true);
  view.setUint32(8, batch.count + 1, true);
  return rep.subarray(0, at);
}

/**
 * The batch as held: a copy of its entries (and the tail's room) when they fill less than half of
 * its buffer (sized for every op of the chunk before the sort kept the last one per key, or a view
 * of a larger buffer), so what is counted is what is kept alive.
 */
function rightSized(batch: SortedBatch): SortedBatch {
  const used = batch.end + BATCH_TAIL_BYTES;
  return batch.rep.buffer.byteLength > 2 * used ? { ...batch, rep: batch.rep.slice(0, used) } : batch;
}
