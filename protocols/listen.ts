import type { AddressInfo } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../core/errors.js';
import { SETTINGS } from '../core/settings.js';

/** Levels at which fastify's "Server listening" lines would show. */
const LEVELS_SHOWING_INFO = new Set(['trace', 'debug', 'info']);

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** How the user sets this port, for the error message, e.g. "SVC_HTTP_PORT / --port". */
  readonly settingName: string;
}

/** "SVC_HTTP_PORT / --port" for a setting key of core/settings.ts. */
export function settingLabel(key: string): string {
  const spec = SETTINGS.find((s) => s.key === key);
  return spec === undefined ? key : `${spec.env} / --${spec.flag}`;
}

/**
 * Start listening and resolve to a URL a local client can use (a wildcard host becomes the
 * loopback address). A taken, forbidden or foreign address becomes one clear CONFIG_INVALID.
 */
export async function listen(server: FastifyInstance, options: ListenOptions): Promise<string> {
  const { host, port } = options;
  // fastify logs one "Server listening" line per address; svcdb logs one line for the whole
  // process (bin/svcdb.ts), so those lines are muted for the duration of the call.
  const level = server.log.level;
  if (LEVELS_SHOWING_INFO.has(level)) server.log.level = 'warn';
  try {
    await server.listen({ host, port });
  } catch (error) {
    throw listenError(error, options);
  } finally {
    server.log.level = level;
  }
  return urlOf(server.server.address() as AddressInfo, server.server instanceof TlsServer ? 'https' : 'http');
}

function listenError(error: unknown, { host, port, settingName }: ListenOptions): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const details = { host, port, setting: settingName, errno: code };
  switch (code) {
    case 'EADDRINUSE':
      return new SvcError('CONFIG_INVALID', `port ${port} is already in use (${settingName}); choose another or stop the process using it`, details, error);
    case 'EACCES':
    case 'EPERM':
      return new SvcError('CONFIG_INVALID', `port ${port} needs privileges this process lacks (${settingName}); choose a port above 1023`, details, error);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SvcError(
        'CONFIG_INVALID',
        `cannot listen on ${host}:${port}: ${host} is not an address of this machine (${settingLabel('host')})`,
        details,
        error,
      );
    default:
      // Anything else is not a configuration mistake; it propagates as it is.
      return error;
  }
}

function urlOf(address: AddressInfo, scheme: 'http' | 'https'): string {
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  const host = wildcard ? '127.0.0.1' : address.address;
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}
