/**
 * Child process of the log crash test: appends records as fast as it can with 16 writers and
 * prints `ack <lsn>` only once each is durable. The parent SIGKILLs it at a random moment.
 * Usage: node dist/test/log/crash-appender.js LOG_DIR
 */
import { silentLogger } from '../../core/logger.js';
import { openLog } from '../../log/index.js';
import { payloadFor } from './helpers.js';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: crash-appender LOG_DIR');
const log = await openLog({
  dir,
  segmentSizeBytesMax: 64 * 1024,
  durability: 'commit',
  fsyncIntervalMs: 10,
  readBatchBytesMax: 1024 * 1024,
  indexIntervalBytes: 1024,
  logger: silentLogger,
});
process.stdout.write('ready\n');
let appended = 0;
async function writer(): Promise<never> {
  for (;;) {
    // The payload is a function of the LSN, so the parent can check every byte.
    const recordLsn = log.headLsn + 1;
    const { lsn, durable } = log.append(payloadFor(recordLsn, (appended++ * 37) % 700));
    await durable;
    process.stdout.write(`ack ${lsn}\n`);
  }
}
await Promise.all(Array.from({ length: 16 }, writer));
