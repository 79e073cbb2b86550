/**
 * The permission policy of a data directory (PostgreSQL's rule): only the owner may read or write
 * it, unless the operator asks for group read (`dataDirMode` 0750, PostgreSQL's
 * `data_directory_mode`). Pure values here; projections/data-dir-modes.ts applies and checks them.
 */
export const DATA_DIR_MODE_SETTINGS = ['0700', '0750'] as const;
export type DataDirModeSetting = (typeof DATA_DIR_MODE_SETTINGS)[number];

/**
 * The mode bits data files and directories are created with: at most owner read-write and group
 * read. The process umask set for the data directory (0o077, or 0o027 with group read) takes away
 * what the policy does not allow, so by default files end up 0600 and directories 0700.
 */
export const DATA_FILE_CREATE_MODE = 0o640;
export const DATA_DIR_CREATE_MODE = 0o750;

export interface DataDirModePolicy {
  readonly setting: DataDirModeSetting;
  /** Mode of the data directory and every directory in it. */
  readonly dirMode: number;
  /** Most a file may have (the key files are always 0600). */
  readonly fileMode: number;
  /** The process umask while svcdb works on the data directory. */
  readonly umask: number;
  /** Permission bits that must never be set on anything in the data directory. */
  readonly forbiddenBits: number;
  /** The shell command that fixes a directory with too open permissions (DIR stands for the path). */
  readonly fixCommand: string;
}

const POLICIES: Readonly<Record<DataDirModeSetting, DataDirModePolicy>> = Object.freeze({
  '0700': Object.freeze({ setting: '0700', dirMode: 0o700, fileMode: 0o600, umask: 0o077, forbiddenBits: 0o077, fixCommand: 'chmod -R go-rwx DIR' }),
  '0750': Object.freeze({ setting: '0750', dirMode: 0o750, fileMode: 0o640, umask: 0o027, forbiddenBits: 0o027, fixCommand: 'chmod -R g-w,o-rwx DIR' }),
});

/** The policy of a `dataDirMode` setting. */
export function dataDirModePolicy(setting: DataDirModeSetting = '0700'): DataDirModePolicy {
  return POLICIES[setting];
}

/** `0o755` as `0755`, as ls and chmod write it. */
export const octalMode = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
