import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { SvcError } from '../../core/errors.js';
import type { TlsMaterial } from './fastify-base.js';

export interface TlsSettings {
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
}

const PEM_BEGIN = '-----BEGIN ';

/** PEM text as it is, or the contents of the file it names (the setting's name is in the error). */
async function pemOf(value: string, setting: string): Promise<string> {
  if (value.includes(PEM_BEGIN)) return value;
  try {
    return await readFile(value, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Name the path only when it looks like one: a value pasted without its BEGIN line may be key material.
    const shown = value.length <= 256 && !/\s/.test(value) ? `: ${value}` : '';
    throw new SvcError(
      'CONFIG_INVALID',
      `${setting} is neither PEM text nor a readable file${shown} (${code ?? 'unreadable'})`,
      { setting, errno: code },
      error,
    );
  }
}

/**
 * The HTTPS listener's key and certificate from SVC_TLS_CERT and SVC_TLS_KEY (each PEM text or a
 * file path), or null when neither is set. One without the other, an unreadable file, or a key
 * that does not fit the certificate stops the start with CONFIG_INVALID.
 */
export async function loadTlsMaterial(settings: TlsSettings): Promise<TlsMaterial | null> {
  const { tlsCert, tlsKey } = settings;
  if (tlsCert === undefined && tlsKey === undefined) return null;
  if (tlsCert === undefined || tlsKey === undefined) {
    const missing = tlsCert === undefined ? 'SVC_TLS_CERT / --tls-cert' : 'SVC_TLS_KEY / --tls-key';
    throw new SvcError('CONFIG_INVALID', `HTTPS needs both a certificate and a key: ${missing} is not set`, {
      setting: tlsCert === undefined ? 'tlsCert' : 'tlsKey',
    });
  }
  const material = { cert: await pemOf(tlsCert, 'SVC_TLS_CERT'), key: await pemOf(tlsKey, 'SVC_TLS_KEY') };
  try {
    createSecureContext(material);
  } catch (error) {
    // node's message names the problem (bad PEM, key does not match the certificate), never the key.
    throw new SvcError('CONFIG_INVALID', `SVC_TLS_CERT / SVC_TLS_KEY cannot be used: ${(error as Error).message}`, { setting: 'tlsCert' }, error);
  }
  return material;
}
