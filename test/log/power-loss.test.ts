/**
 * Durability under power loss, proved from the system calls. SIGKILL keeps the page cache, so a
 * missing fdatasync goes unnoticed by the crash tests; here the real server runs under
 * `strace -f -y` and the trace must show:
 * - every acknowledged write was covered by an fdatasync of its log segment before the answer
 *   (requests one at a time: at each answer, every segment write so far is synced);
 * - with SVC_LOG_RETENTION_ENABLED, before a segment is deleted, the LevelDB write holding the
 *   offset of its last record was fsynced (the offset a restart resumes from must outlive it).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI, serve, type Serving } from '../helpers/cli.js';
import { hasTool, needs } from '../helpers/optional-tool.js';
import { tempDir } from '../helpers/stack.js';
import { parseStrace, type SyscallEvent } from '../helpers/strace.js';

const STRACE = hasTool('strace', ['-V']);
const KEY = 'power-loss-key';
const ROWS = 200;
/** ~1 KiB rows in 64 KiB segments: a few segments, the older ones retained away. */
const PAD = 'p'.repeat(1000);
const WRITES = new Set(['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2']);
const SYNCS = new Set(['fdatasync', 'fsync']);
const UNLINKS = new Set(['unlink', 'unlinkat']);

const marker = (i: number): string => `marker-${String(i).padStart(6, '0')}`;
const markersIn = (text: string): number[] => [...text.matchAll(/marker-(\d{6})/g)].map((m) => Number(m[1]));

describe.skipIf(!STRACE)(`${needs('strace')} fsync discipline of the running server (strace)`, () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: Serving | null = null;
  let events: SyscallEvent[] = [];
  let logDir = '';
  let stateDir = '';
  let acknowledged = 0;

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
    dir = await tempDir('svcdb-power-loss-');
    const dataDir = path.join(dir.dir, 'data');
    await mkdir(dataDir);
    logDir = path.join(dataDir, 'log');
    stateDir = path.join(dataDir, 'state');
    const trace = path.join(dir.dir, 'trace.txt');
    server = await serve(['--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--data', dataDir], {
      wrapper: ['strace', '-f', '-y', '-s', '65536', '-o', trace, '-e', `trace=${[...WRITES, ...SYNCS, ...UNLINKS].join(',')}`],
      env: { SVC_API_KEY: KEY, SVC_LOG_RETENTION_ENABLED: 'true', SVC_LOG_SEGMENT_SIZE_BYTES_MAX: String(64 * 1024), SVC_LOG_LEVEL: 'info' },
    });
    const url = `${server.listening.httpUrl}/api/v1/query`;
    const query = async (sql: string): Promise<number> => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sql }),
      });
      await response.arrayBuffer();
      return response.status;
    };
    expect(await query('CREATE TABLE t (id INT PRIMARY KEY, v TEXT)')).toBe(200);
    // One request at a time: at each answer, no other write is in flight.
    for (let i = 1; i <= ROWS; i++) {
      expect(await query(`INSERT INTO t VALUES (${i}, '${marker(i)}${PAD}')`)).toBe(200);
      acknowledged += 1;
    }
    // Retention runs after the apply that made a segment deletable: wait for the deletion itself.
    const pid = Number(/"pid":(\d+)/.exec(server.stdout())![1]);
    await vi.waitFor(() => expect(server!.stdout()).toMatch(/retention deleted segments/), { timeout: 60_000, interval: 100 });
    process.kill(pid, 'SIGTERM');
    const finished = await server.exited;
    server = null;
    expect(finished.code, finished.stderr).toBe(0);
    events = parseStrace(await readFile(trace, 'utf8'));
  }, 180_000);

  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await dir?.remove();
  });

  const inLog = (e: SyscallEvent): boolean => path.dirname(e.path) === logDir && e.path.endsWith('.log');
  const inState = (e: SyscallEvent): boolean => path.dirname(e.path) === stateDir && e.path.endsWith('.log');

  it('every acknowledged record was fdatasynced in its segment before the answer', () => {
    const written = new Map<string, number>(); // segment -> writes ended
    const synced = new Map<string, number>(); // segment -> writes covered by an ended sync
    const syncing = new Map<string, number>(); // `${pid}:${segment}` -> writes ended when the sync started
    let answers = 0;
    let segmentWrites = 0;
    const unsynced: string[] = [];
    for (const e of events) {
      if (WRITES.has(e.name) && inLog(e) && e.phase === 'end' && e.result > 0) {
        written.set(e.path, (written.get(e.path) ?? 0) + 1);
        segmentWrites += 1;
      } else if (SYNCS.has(e.name) && inLog(e)) {
        if (e.phase === 'start') syncing.set(`${e.pid}:${e.path}`, written.get(e.path) ?? 0);
        else if (e.result === 0) synced.set(e.path, Math.max(synced.get(e.path) ?? 0, syncing.get(`${e.pid}:${e.path}`) ?? 0));
      } else if (WRITES.has(e.name) && e.phase === 'start' && e.path.startsWith('socket:') && e.args.includes('HTTP/1.1 200')) {
        answers += 1;
        for (const [segment, count] of written) {
          if ((synced.get(segment) ?? 0) < count)
            unsynced.push(`answer ${answers}: ${count - (synced.get(segment) ?? 0)} write(s) to ${path.basename(segment)} not yet fdatasynced`);
        }
      }
    }
    expect(answers).toBe(acknowledged + 1); // the CREATE TABLE and every INSERT
    expect(segmentWrites).toBeGreaterThanOrEqual(acknowledged + 1);
    expect(unsynced).toEqual([]);
  });

  it("before retention deleted a segment, the LevelDB write of its last record's offset was fsynced", () => {
    // Segment -> the markers of the records written to it.
    const markersOf = new Map<string, number[]>();
    for (const e of events)
      if (WRITES.has(e.name) && inLog(e) && e.phase === 'start') markersOf.set(e.path, [...(markersOf.get(e.path) ?? []), ...markersIn(e.args)]);
    // LevelDB's write-ahead writes: where each marker's batch went, and when the write ended.
    const batchOf = new Map<number, { path: string; endSeq: number }>();
    const startOf = new Map<string, SyscallEvent>();
    for (const e of events) {
      if (!WRITES.has(e.name) || !inState(e)) continue;
      if (e.phase === 'start') startOf.set(`${e.pid}`, e);
      else for (const m of markersIn(startOf.get(`${e.pid}`)?.args ?? '')) batchOf.set(m, { path: e.path, endSeq: e.seq });
    }
    // Completed fsyncs of LevelDB's files: [start, end] in trace order.
    const syncs: { path: string; startSeq: number; endSeq: number }[] = [];
    const syncStart = new Map<string, number>();
    for (const e of events) {
      if (!SYNCS.has(e.name) || !inState(e)) continue;
      if (e.phase === 'start') syncStart.set(`${e.pid}:${e.path}`, e.seq);
      else if (e.result === 0) syncs.push({ path: e.path, startSeq: syncStart.get(`${e.pid}:${e.path}`)!, endSeq: e.seq });
    }
    const deletions = events.filter((e) => UNLINKS.has(e.name) && e.phase === 'start' && inLog(e));
    expect(deletions.length).toBeGreaterThan(0);
    const unprotected: string[] = [];
    for (const deletion of deletions) {
      const last = Math.max(...(markersOf.get(deletion.path) ?? []));
      const batch = batchOf.get(last);
      expect(batch, `the batch applying ${marker(last)}`).toBeDefined();
      const covered = syncs.some((s) => s.path === batch!.path && s.startSeq > batch!.endSeq && s.endSeq < deletion.seq);
      if (!covered) unprotected.push(`${path.basename(deletion.path)} deleted while the offset of ${marker(last)} was not fsynced`);
    }
    expect(unprotected).toEqual([]);
  });
});
