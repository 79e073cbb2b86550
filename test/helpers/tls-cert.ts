import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** True when the `openssl` command is on PATH (.ci/run installs it: DEBIAN_TOOLS openssl:openssl). */
export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TestCert {
  /** PEM texts. */
  readonly cert: string;
  readonly key: string;
  /** The same, as files (SVC_TLS_CERT / SVC_TLS_KEY may be paths). */
  readonly certPath: string;
  readonly keyPath: string;
  remove(): Promise<void>;
}

/** A self-signed P-256 certificate for localhost and 127.0.0.1, valid one day, made by openssl. */
export async function makeTestCert(): Promise<TestCert> {
  const dir = await mkdtemp(join(tmpdir(), 'svcdb-tls-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  return {
    cert: await readFile(certPath, 'utf8'),
    key: await readFile(keyPath, 'utf8'),
    certPath,
    keyPath,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
