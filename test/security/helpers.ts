/** Shared pieces of the threat-model suite (test/security/). */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { connect, type Socket } from 'node:net';

/** Every file and directory under `root` (root included, as '.') with its permission bits. */
export async function modesUnder(root: string): Promise<Map<string, { mode: number; dir: boolean }>> {
  const out = new Map<string, { mode: number; dir: boolean }>();
  const visit = async (relative: string): Promise<void> => {
    const info = await stat(path.join(root, relative));
    out.set(relative, { mode: info.mode & 0o777, dir: info.isDirectory() });
    if (!info.isDirectory()) return;
    for (const name of await readdir(path.join(root, relative))) await visit(relative === '.' ? name : path.join(relative, name));
  };
  await visit('.');
  return out;
}

/** Entries whose mode differs from `dirMode` (directories) or has bits beyond `fileMode` (files). */
export function wrongModes(modes: Map<string, { mode: number; dir: boolean }>, dirMode = 0o700, fileMode = 0o600): string[] {
  const wrong: string[] = [];
  for (const [name, { mode, dir }] of modes) {
    if (dir ? mode !== dirMode : (mode & ~fileMode) !== 0) wrong.push(`${name} ${mode.toString(8)}`);
  }
  return wrong;
}

/** A raw TCP connection to an http:// URL's host and port. */
export function rawConnection(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with what the server sent once it closes the connection (or rejects after `timeoutMs`). */
export function untilClosed(socket: Socket, timeoutMs: number): Promise<{ text: string; afterMs: number }> {
  const started = Date.now();
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`connection still open after ${timeoutMs} ms`)), timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ text, afterMs: Date.now() - started });
    });
    socket.on('error', () => undefined);
  });
}
