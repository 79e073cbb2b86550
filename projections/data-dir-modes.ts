import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { SvcError } from '../core/errors.js';
import { octalMode, type DataDirModePolicy } from '../core/file-modes.js';
import { PROJECTION_LIMITS } from './limits.js';

const { dataDirWalkEntriesMax, dataDirWalkDepthMax, dataDirTooOpenListedMax } = PROJECTION_LIMITS;

/**
 * Sets the process umask to the policy's, for the whole run: every file created from now on (by
 * svcdb, LevelDB, the hnsw worker, a temporary file) gets at most the policy's mode, not only the
 * files svcdb opens itself. Worker threads cannot change the umask; they inherit the process's.
 */
export function restrictUmask(policy: DataDirModePolicy): void {
  if (isMainThread) process.umask(policy.umask);
}

export interface ModeEntry {
  /** Relative to the data directory ('.' is the directory itself). */
  readonly path: string;
  readonly mode: string;
  readonly kind: 'directory' | 'file';
}

export interface ModeScan {
  /** The data directory's own mode, e.g. `0700`. */
  readonly dataDirMode: string;
  /** Files and directories looked at, the data directory included. */
  readonly entries: number;
  /** Entries with a bit the policy forbids (at most 20 listed). */
  readonly tooOpen: readonly ModeEntry[];
  /** How many entries are too open in all. */
  readonly tooOpenCount: number;
  /** True when the walk stopped at its bound before seeing everything. */
  readonly truncated: boolean;
}

/**
 * Walks the data directory and reports every file and directory whose mode has a bit the policy
 * forbids. Symbolic links are followed (a log directory moved to another disk is still checked);
 * entries that vanish meanwhile (a running server compacting) are skipped.
 */
export async function scanDataDirModes(root: string, policy: DataDirModePolicy): Promise<ModeScan> {
  const rootInfo = await stat(root);
  const tooOpen: ModeEntry[] = [];
  let tooOpenCount = 0;
  let entries = 0;
  let truncated = false;
  const note = (relative: string, mode: number, kind: ModeEntry['kind']): void => {
    entries += 1;
    if ((mode & policy.forbiddenBits) === 0) return;
    tooOpenCount += 1;
    if (tooOpen.length < dataDirTooOpenListedMax) tooOpen.push({ path: relative, mode: octalMode(mode), kind });
  };
  note('.', rootInfo.mode, 'directory');
  const pending: { dir: string; depth: number }[] = [{ dir: '', depth: 0 }];
  while (pending.length > 0) {
    const { dir, depth } = pending.pop()!;
    const names = await readdir(path.join(root, dir)).catch(ignoreVanished);
    for (const name of names ?? []) {
      if (entries >= dataDirWalkEntriesMax) {
        truncated = true;
        break;
      }
      const relative = path.join(dir, name);
      const info = await stat(path.join(root, relative)).catch(ignoreVanished);
      if (info === null) continue;
      const isDir = info.isDirectory();
      note(relative, info.mode, isDir ? 'directory' : 'file');
      if (isDir && depth < dataDirWalkDepthMax) pending.push({ dir: relative, depth: depth + 1 });
    }
  }
  return { dataDirMode: octalMode(rootInfo.mode), entries, tooOpen, tooOpenCount, truncated };
}

function ignoreVanished(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
}

/**
 * Refuses a data directory that group or others may read or write beyond the policy, as
 * PostgreSQL refuses to start on one: the message names what is too open and the command that
 * fixes it.
 */
export async function checkDataDirModes(root: string, policy: DataDirModePolicy): Promise<void> {
  const scan = await scanDataDirModes(root, policy);
  if (scan.tooOpenCount === 0) return;
  const first = scan.tooOpen[0]!;
  const what = first.path === '.' ? `it has mode ${first.mode}` : `${first.path} has mode ${first.mode}`;
  const others = scan.tooOpenCount > 1 ? `, and ${scan.tooOpenCount - 1} more` : '';
  const groupOnly = policy.setting === '0700' && scan.tooOpen.every((e) => (parseInt(e.mode, 8) & 0o027) === 0);
  const alternative = groupOnly ? ', or allow group read with --data-dir-mode 0750 (SVC_DATA_DIR_MODE)' : '';
  throw new SvcError(
    'DATA_DIR_INVALID',
    `data directory ${root} is accessible by group or others (${what}${others}); it must be ${octalMode(policy.dirMode)} with files ${octalMode(policy.fileMode)} at most. Fix it with: ${policy.fixCommand.replace('DIR', shellQuoted(root))}${alternative}`,
    { dataDir: root, mode: scan.dataDirMode, too_open: scan.tooOpen.map((e) => `${e.path} ${e.mode}`) },
  );
}

/** A path as one shell word (single-quoted unless it is plainly safe). */
function shellQuoted(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
