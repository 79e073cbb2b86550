import { spawn } from 'node:child_process';

/**
 * Runs a crash-test child (`node script ...args`), lets it work for `writeMs` after it prints
 * `ready`, then SIGKILLs it. Resolves with the payloads of the `ack <payload>` lines it printed
 * (only complete lines: an ack cut by the kill was never reported, so it does not count).
 */
export function runUntilKilled(script: string, args: readonly string[], writeMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: string[] = [];
    let buffered = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line === 'ready') setTimeout(() => child.kill('SIGKILL'), writeMs);
        else if (line.startsWith('ack ')) acked.push(line.slice(4));
      }
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`${script} exited with ${code ?? signal} before the kill: ${stderr}`));
    });
  });
}
