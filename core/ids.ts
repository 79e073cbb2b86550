import { randomFillSync } from 'node:crypto';
import { ulid } from 'ulid';

/**
 * ULIDs for request and query ids. The ulid package's default generator asks the OS for random
 * bytes once per character (16 syscalls-worth of work per id, ~0.1 ms per request); this one
 * draws the same cryptographic bytes from a pool refilled 4 KiB at a time.
 */
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

function pooledRandom(): number {
  if (poolAt === POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]! / 256;
}

export function newUlid(): string {
  return ulid(undefined, pooledRandom);
}
