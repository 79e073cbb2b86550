/**
 * CRC-64-AVRO: the 64-bit Rabin fingerprint the Avro specification recommends for schema
 * fingerprints ("Schema Fingerprints"), and the one single-object encoding puts in its header.
 * avsc has none (its `fingerprint()` is MD5/SHA-256), so it is written here from the spec: the
 * polynomial's EMPTY value, a 256-entry table, one table step per byte. Checked against the
 * fingerprints of apache/avro share/test/data/schema-tests.txt (test/sinks/avro-format.test.ts).
 */

/** The fingerprint of the empty string, and the reduction polynomial (Avro spec). */
const EMPTY = 0xc15d213aa4d7a795n;
const MASK_64 = 0xffffffffffffffffn;

const TABLE: readonly bigint[] = (() => {
  const table: bigint[] = [];
  for (let i = 0n; i < 256n; i++) {
    let fp = i;
    // `-(fp & 1)` of the spec's Java is all ones or zero: pick EMPTY or nothing.
    for (let bit = 0; bit < 8; bit++) fp = (fp >> 1n) ^ ((fp & 1n) === 1n ? EMPTY : 0n);
    table.push(fp);
  }
  return table;
})();

/** The CRC-64-AVRO fingerprint of some bytes, as an unsigned 64-bit value. */
export function crc64Avro(bytes: Uint8Array): bigint {
  let fp = EMPTY;
  for (const byte of bytes) fp = ((fp >> 8n) ^ TABLE[Number((fp ^ BigInt(byte)) & 0xffn)]!) & MASK_64;
  return fp;
}

/** The fingerprint of a schema's Parsing Canonical Form, as the 8 little-endian bytes single-object encoding carries. */
export function fingerprintBytes(canonicalForm: string): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(crc64Avro(Buffer.from(canonicalForm, 'utf8')));
  return out;
}

/** The same fingerprint as Java's `SchemaNormalization.parsingFingerprint64` prints it: a signed 64-bit integer. */
export function fingerprintInt64(canonicalForm: string): bigint {
  return BigInt.asIntN(64, crc64Avro(Buffer.from(canonicalForm, 'utf8')));
}
