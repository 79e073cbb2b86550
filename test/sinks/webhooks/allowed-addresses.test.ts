import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { AddressRefusedError, AllowedAddresses, checkUrl, guardedLookup } from '../../../sinks/webhooks/allowed-addresses.js';

describe('AllowedAddresses', () => {
  it('an empty list allows any address', () => {
    const a = AllowedAddresses.parse([]);
    expect(a.any).toBe(true);
    expect(a.allows('8.8.8.8')).toBe(true);
  });

  it('checks IPv4 and IPv6 CIDRs and single addresses', () => {
    const a = AllowedAddresses.parse(['127.0.0.0/8', '10.0.0.0/8', 'fd00::/8', '::1', '192.168.1.7']);
    expect(a.any).toBe(false);
    for (const ok of ['127.0.0.1', '127.255.0.9', '10.20.30.40', 'fd12:3456::1', '::1', '[::1]', '192.168.1.7', 'fd00::1%eth0']) {
      expect(a.allows(ok), ok).toBe(true);
    }
    for (const no of ['11.0.0.1', '192.168.1.8', '8.8.8.8', '::2', 'fe80::1', '2001:db8::1', 'localhost', '']) {
      expect(a.allows(no), no).toBe(false);
    }
  });

  it('IPv4-mapped IPv6 addresses match IPv4 ranges', () => {
    const a = AllowedAddresses.parse(['127.0.0.0/8']);
    expect(a.allows('::ffff:127.0.0.1')).toBe(true);
    expect(a.allows('::ffff:10.0.0.1')).toBe(false);
  });

  it.each(['10.0.0.0/33', '::/129', 'example.com/8', '10.0.0.0/8/1', '10.0.0.0/', '10.0.0.0/x', '300.1.1.1'])('refuses %j with CONFIG_INVALID', (cidr) => {
    expect(() => AllowedAddresses.parse([cidr])).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});

describe('guardedLookup', () => {
  const answer = (addresses: LookupAddress[]) => ((_h: string, _o: unknown, cb: (e: null, a: LookupAddress[]) => void) => cb(null, addresses)) as never;

  function run(lookup: ReturnType<typeof guardedLookup>, all: boolean): Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }> {
    return new Promise((resolve) => lookup('receiver.test', { all }, (err, address, family) => resolve({ err, address, family })));
  }

  it('answers with the allowed addresses only, in both lookup shapes', async () => {
    const allowed = AllowedAddresses.parse(['10.0.0.0/8']);
    const lookup = guardedLookup(
      allowed,
      answer([
        { address: '8.8.8.8', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ]),
    );
    expect(await run(lookup, true)).toMatchObject({ err: null, address: [{ address: '10.0.0.5', family: 4 }] });
    expect(await run(lookup, false)).toMatchObject({ err: null, address: '10.0.0.5', family: 4 });
  });

  it('fails with AddressRefusedError when no address is allowed', async () => {
    const lookup = guardedLookup(AllowedAddresses.parse(['10.0.0.0/8']), answer([{ address: '127.0.0.1', family: 4 }]));
    const { err } = await run(lookup, false);
    expect(err).toBeInstanceOf(AddressRefusedError);
    expect(err).toMatchObject({ code: 'SVC_ADDRESS_REFUSED', addresses: ['127.0.0.1'] });
  });

  it('passes resolution errors through', async () => {
    const failing = ((_h: string, _o: unknown, cb: (e: Error) => void) => cb(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }))) as never;
    const { err } = await run(guardedLookup(AllowedAddresses.parse(['10.0.0.0/8']), failing), true);
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('checkUrl', () => {
  const refused = (reason: RegExp) => expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(reason) });

  it('accepts http and https URLs and returns them parsed', async () => {
    expect((await checkUrl('https://hooks.example.com/in?x=1', [])).host).toBe('hooks.example.com');
    expect((await checkUrl('http://127.0.0.1:9000/', ['127.0.0.0/8'])).port).toBe('9000');
  });

  it.each([
    ['not a url', /not a valid URL/],
    ['ftp://example.com/', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['javascript:alert(1)', /http or https/],
    ['https://user:pw@example.com/', /credentials/],
    ['https://user@example.com/', /credentials/],
  ])('refuses %j', async (url, reason) => {
    await expect(checkUrl(url, [])).rejects.toThrow(refused(reason));
  });

  it('with ranges: IP literals are checked (IPv4, IPv6, and spellings the URL parser normalizes)', async () => {
    await expect(checkUrl('http://127.0.0.1:8080/', ['10.0.0.0/8'])).rejects.toThrow(refused(/outside the allowed/));
    await expect(checkUrl('http://0x7f.1/', ['10.0.0.0/8'])).rejects.toThrow(refused(/outside the allowed/));
    await expect(checkUrl('http://[::1]:8080/', ['10.0.0.0/8'])).rejects.toThrow(refused(/outside the allowed/));
    await expect(checkUrl('http://[::1]:8080/', ['::1/128'])).resolves.toBeInstanceOf(URL);
    await expect(checkUrl('http://10.9.8.7/', ['10.0.0.0/8'])).resolves.toBeInstanceOf(URL);
  });

  it('with ranges: a name is resolved and must have an address inside (localhost)', async () => {
    await expect(checkUrl('http://localhost:8080/', ['10.0.0.0/8'])).rejects.toThrow(refused(/outside the allowed/));
    await expect(checkUrl('http://localhost:8080/', ['127.0.0.0/8', '::1/128'])).resolves.toBeInstanceOf(URL);
  });

  it('with ranges: a name that does not resolve is refused', async () => {
    const resolve = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    await expect(checkUrl('https://nowhere.invalid/', ['10.0.0.0/8'], resolve)).rejects.toThrow(refused(/does not resolve/));
  });

  it('with ranges: one address inside is enough', async () => {
    const resolve = () =>
      Promise.resolve([
        { address: '8.8.8.8', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ]);
    await expect(checkUrl('https://mixed.test/', ['10.0.0.0/8'], resolve)).resolves.toBeInstanceOf(URL);
  });

  it('without ranges: names are not resolved', async () => {
    const resolve = () => Promise.reject(new Error('must not be called'));
    await expect(checkUrl('https://nowhere.invalid/', [], resolve)).resolves.toBeInstanceOf(URL);
  });

  it('a malformed range is CONFIG_INVALID', async () => {
    await expect(checkUrl('https://example.com/', ['10.0.0.0/99'])).rejects.toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
