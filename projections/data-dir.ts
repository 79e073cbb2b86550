import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../core/errors.js';
import { DATA_DIR_CREATE_MODE, DATA_FILE_CREATE_MODE, dataDirModePolicy, type DataDirModeSetting } from '../core/file-modes.js';
import { checkDataDirModes, restrictUmask } from './data-dir-modes.js';

/** The on-disk layout of a data directory. */
export interface DataDirLayout {
  readonly root: string;
  readonly logDir: string;
  readonly stateDir: string;
  /** Where `svcdb replay` builds fresh projections before swapping them in. */
  readonly rebuildDir: string;
  /** Vector index checkpoints (a cache of the log like stateDir), and where replay builds them. */
  readonly vectorDir: string;
  readonly vectorRebuildDir: string;
  readonly markerFile: string;
}

export const DATA_DIR_FORMAT = 'svcdb-data';
export const DATA_DIR_FORMAT_VERSION = 1;

export function dataDirLayout(root: string): DataDirLayout {
  const absolute = path.resolve(root);
  return {
    root: absolute,
    logDir: path.join(absolute, 'log'),
    stateDir: path.join(absolute, 'state'),
    rebuildDir: path.join(absolute, 'state.rebuild'),
    vectorDir: path.join(absolute, 'vectors'),
    vectorRebuildDir: path.join(absolute, 'vectors.rebuild'),
    markerFile: path.join(absolute, 'svcdb.json'),
  };
}

export interface PrepareDataDirOptions {
  /** Make the data directory when it is missing or empty. */
  readonly create: boolean;
  /** The `dataDirMode` setting (default 0700: only the owner). */
  readonly mode?: DataDirModeSetting;
  /** Refuse a directory that group or others may access beyond `mode` (default true; inspect reports instead). */
  readonly checkModes?: boolean;
}

/**
 * Checks that `root` is an svcdb data directory (or makes one when it is missing or empty), so a
 * wrong --data never scribbles over someone else's files, and that no other local user can read
 * or write it (PostgreSQL's rule). Sets the process umask to the mode policy first, so everything
 * created afterwards is private. Locking is LevelDB's: the projection store is opened next and
 * refuses a second process.
 */
export async function prepareDataDir(root: string, options: PrepareDataDirOptions): Promise<DataDirLayout> {
  const layout = dataDirLayout(root);
  const policy = dataDirModePolicy(options.mode);
  restrictUmask(policy);
  const entries = await listDir(layout.root);
  if (entries === null || entries.length === 0) {
    if (!options.create) {
      throw new SvcError('DATA_DIR_INVALID', `${layout.root} holds no svcdb data; check --data / SVC_DATA_DIR`, { dataDir: layout.root });
    }
    await mkdir(layout.logDir, { recursive: true, mode: DATA_DIR_CREATE_MODE });
    // An empty directory made beforehand (mkdir data) gets the policy's mode, as initdb fixes one.
    await chmod(layout.root, policy.dirMode);
    const marker = { format: DATA_DIR_FORMAT, formatVersion: DATA_DIR_FORMAT_VERSION, createdAt: new Date().toISOString() };
    await writeFile(`${layout.markerFile}.tmp`, JSON.stringify(marker, null, 2) + '\n', { mode: DATA_FILE_CREATE_MODE });
    await rename(`${layout.markerFile}.tmp`, layout.markerFile);
    return layout;
  }
  if (!entries.includes('svcdb.json')) {
    throw new SvcError(
      'DATA_DIR_INVALID',
      `${layout.root} is not an svcdb data directory (it has files but no svcdb.json); point --data / SVC_DATA_DIR at an empty directory or one made by svcdb`,
      { dataDir: layout.root },
    );
  }
  await checkMarker(layout);
  if (options.checkModes ?? true) await checkDataDirModes(layout.root, policy);
  await mkdir(layout.logDir, { recursive: true, mode: DATA_DIR_CREATE_MODE });
  // A replay that died half-way leaves its scratch directory behind; the real state is intact.
  if (entries.includes('state.rebuild')) await rm(layout.rebuildDir, { recursive: true, force: true });
  if (entries.includes('vectors.rebuild')) await rm(layout.vectorRebuildDir, { recursive: true, force: true });
  return layout;
}

async function checkMarker(layout: DataDirLayout): Promise<void> {
  let marker: { format?: unknown; formatVersion?: unknown };
  try {
    marker = JSON.parse(await readFile(layout.markerFile, 'utf8'));
  } catch (error) {
    throw new SvcError(
      'DATA_DIR_INVALID',
      `${layout.markerFile} is unreadable or corrupt (${(error as Error).message}); restore it or start from an empty directory`,
      { dataDir: layout.root },
      error,
    );
  }
  if (marker.format !== DATA_DIR_FORMAT || typeof marker.formatVersion !== 'number') {
    throw new SvcError('DATA_DIR_INVALID', `${layout.root} is not an svcdb data directory (svcdb.json has format ${JSON.stringify(marker.format)})`, {
      dataDir: layout.root,
    });
  }
  if (marker.formatVersion > DATA_DIR_FORMAT_VERSION) {
    throw new SvcError(
      'DATA_DIR_INVALID',
      `${layout.root} was written by a newer svcdb (format ${marker.formatVersion}, this build reads ${DATA_DIR_FORMAT_VERSION}); upgrade svcdb`,
      { dataDir: layout.root },
    );
  }
}

async function listDir(dir: string): Promise<string[] | null> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) {
      throw new SvcError('DATA_DIR_INVALID', `${dir} is a file, not a directory; point --data / SVC_DATA_DIR at a directory`, { dataDir: dir });
    }
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (error instanceof SvcError) throw error;
    throw new SvcError('DATA_DIR_INVALID', `cannot read ${dir}: ${(error as Error).message}`, { dataDir: dir }, error);
  }
}
