import { spawn } from 'node:child_process';

/**
 * Runs a crash-test child (`node script ...args`), lets it work for `writeMs` after it prints
 * `ready`, then SIGKILLs it. Resolves with the payloads of the `ack <payload>` lines it printed
 * (only complete lines: an ack cut by the kill was never reported, so it does not count).
 * With `acksMin`, the kill also waits until that many acks were printed, so a slow (loaded)
 * machine still exercises the writes the test counts on instead of killing an idle child.
 */
export function runUntilKilled(script: string, args: readonly string[], writeMs: number, acksMin = 0): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: string[] = [];
    let buffered = '';
    let stderr = '';
    let delayOver = false;
    let killed = false;
    const killWhenDue = (): void => {
      if (killed || !delayOver || acked.length < acksMin) return;
      killed = true;
      child.kill('SIGKILL');
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line === 'ready')
          setTimeout(() => {
            delayOver = true;
            killWhenDue();
          }, writeMs);
        else if (line.startsWith('ack ')) acked.push(line.slice(4));
      }
      killWhenDue();
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`${script} exited with ${code ?? signal} before the kill: ${stderr}`));
    });
  });
}
