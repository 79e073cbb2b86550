/**
 * Branded number types so a log sequence number (logical) and a byte position in a file (physical)
 * cannot be mixed up by accident. Both stay plain numbers at run time (safe up to 2^53).
 */
export type Lsn = number & { readonly __kind: 'Lsn' };
export type FilePositionBytes = number & { readonly __kind: 'FilePositionBytes' };

export const lsn = (value: number): Lsn => value as Lsn;
export const filePosition = (value: number): FilePositionBytes => value as FilePositionBytes;

/** The LSN before the first record: a consumer at offset 0 has applied nothing. */
export const LSN_NONE: Lsn = lsn(0);

export const KIB = 1024;
export const MIB = 1024 * KIB;
