/**
 * The address ranges webhook deliveries may go to (SVC_WEBHOOK_ALLOWED_CIDRS): IPv4 and IPv6 CIDRs
 * kept in a node:net BlockList. An empty list allows any address.
 *
 * Checked twice: at registration (`checkUrl`: the host's addresses, resolved then) and at every
 * connection (`guardedLookup`, the DNS lookup the HTTP client's sockets use, plus a check of IP
 * literals in the connector), so a name that later resolves elsewhere cannot bypass the ranges.
 * A name with several addresses is usable when at least one is inside; connections then go only
 * to the addresses inside (the others are dropped from the lookup's answer).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { SvcError } from '../../core/errors.js';

/** The error a refused connection fails with (the HTTP client classifies it by its code). */
export class AddressRefusedError extends Error {
  readonly code = 'SVC_ADDRESS_REFUSED';

  constructor(
    readonly host: string,
    readonly addresses: readonly string[],
  ) {
    super(`${host} (${addresses.join(', ') || 'no address'}) is outside the allowed webhook address ranges`);
    this.name = 'AddressRefusedError';
  }
}

/** The parsed ranges. */
export class AllowedAddresses {
  private constructor(
    private readonly list: BlockList,
    readonly cidrs: readonly string[],
  ) {}

  /** Parses CIDRs (`10.0.0.0/8`, `fd00::/8`) or single addresses; a malformed one is CONFIG_INVALID. */
  static parse(cidrs: readonly string[]): AllowedAddresses {
    const list = new BlockList();
    for (const text of cidrs) {
      const [address = '', prefix, extra] = text.trim().split('/');
      const family = isIP(address);
      const bits = family === 4 ? 32 : 128;
      const length = prefix === undefined ? bits : Number(prefix);
      if (family === 0 || extra !== undefined || !/^\d{1,3}$/.test(prefix ?? String(bits)) || length > bits) {
        throw new SvcError('CONFIG_INVALID', `not an address range: ${JSON.stringify(text)} (write 10.0.0.0/8 or fd00::/8)`, { cidr: text });
      }
      list.addSubnet(address, length, family === 4 ? 'ipv4' : 'ipv6');
    }
    return new AllowedAddresses(list, Object.freeze([...cidrs]));
  }

  /** True when no ranges are set: every address is allowed. */
  get any(): boolean {
    return this.cidrs.length === 0;
  }

  /** True when `address` (an IP literal) may be connected to. IPv4-mapped IPv6 matches IPv4 ranges. */
  allows(address: string): boolean {
    if (this.any) return true;
    const bare = unbracket(address).split('%')[0]!;
    const family = isIP(bare);
    if (family === 0) return false;
    return this.list.check(bare, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** `[::1]` → `::1` (URL hostnames bracket IPv6). */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** A lookup like dns.lookup's that answers only with allowed addresses, else fails with AddressRefusedError. */
export function guardedLookup(allowed: AllowedAddresses, base: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, answer) => {
      if (err) return callback(err, '', 0);
      const addresses = answer as LookupAddress[];
      const inside = addresses.filter((a) => allowed.allows(a.address));
      if (inside.length === 0)
        return callback(
          new AddressRefusedError(
            hostname,
            addresses.map((a) => a.address),
          ),
          '',
          0,
        );
      if ((options as LookupOptions).all) return callback(null, inside);
      return callback(null, inside[0]!.address, inside[0]!.family);
    });
  };
}

/** Resolves a host name to all its addresses (dns.lookup by default; tests pass their own). */
export type ResolveAll = (hostname: string) => Promise<readonly LookupAddress[]>;

const resolveWithDns: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * Checks a receiver URL at registration: http or https, no credentials in it, a host; when ranges
 * are set, the host (an IP literal, or a name resolved now) must have an address inside them.
 * Throws SvcError('VALIDATION_ERROR'); returns the parsed URL.
 */
export async function checkUrl(url: string, allowedCidrs: readonly string[] | AllowedAddresses, resolve: ResolveAll = resolveWithDns): Promise<URL> {
  const refuse = (reason: string, details: Record<string, unknown> = {}): never => {
    throw new SvcError('VALIDATION_ERROR', `webhook url ${reason}`, { field: 'url', reason, ...details });
  };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    // new URL() throws a TypeError only for a malformed URL: nothing to keep from it.
    if (!(error instanceof TypeError)) throw error;
    return refuse('is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') refuse('must use http or https', { scheme: parsed.protocol.slice(0, -1) });
  if (parsed.username !== '' || parsed.password !== '') refuse('must not contain credentials (sign with the secret instead)');
  const host = unbracket(parsed.hostname);
  if (host === '') refuse('has no host');
  const allowed = allowedCidrs instanceof AllowedAddresses ? allowedCidrs : AllowedAddresses.parse(allowedCidrs);
  if (allowed.any) return parsed;
  let addresses: readonly string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await resolve(host)).map((a) => a.address);
    } catch (err) {
      return refuse('host does not resolve', { host, error: (err as Error).message });
    }
  }
  if (!addresses.some((a) => allowed.allows(a))) refuse('host is outside the allowed address ranges', { host, addresses });
  return parsed;
}

/** SVC_WEBHOOK_ALLOWED_CIDRS: a comma-separated list (unset or blank: any address); a malformed range is CONFIG_INVALID. */
export function parseCidrList(setting: string | undefined): string[] {
  const cidrs = (setting ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  AllowedAddresses.parse(cidrs);
  return cidrs;
}
