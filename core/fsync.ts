import { open } from 'node:fs/promises';

/**
 * fsync of a file or directory by path. For a directory it makes a created, renamed or deleted
 * file name durable; for a file, its data.
 */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsyncPath of a file another party may delete meanwhile (LevelDB compacting its files): gone needs none. */
export async function fsyncIfPresent(path: string): Promise<void> {
  try {
    await fsyncPath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
