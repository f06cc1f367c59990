// Whose address a request is (lib/api/peer.ts): the socket's, or, from a proxy named in the
// config's trustedProxies (LEASEHOLD_TRUSTED_PROXIES), the rightmost X-Forwarded-For entry that
// is not itself a trusted proxy. Issue 30, point 6: X-Forwarded-For was believed from any peer
// on loopback or a private network, so one local client could pass for as many addresses as it
// liked, past the per-address sign-in limit and the stream's per-address slots.
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { clientAddress, PEER_HEADER } from '../../lib/api/peer';
import { ConfigError, type Config } from '../../lib/config';
import { admitStreamClient } from '../../lib/live/stream';
import { createParts } from '../../lib/parts';
import { configFiles } from '../support/config-files';

// The process's config as lib/api/peer.ts reads it (getConfig()), set by each test.
const processConfig = vi.hoisted(() => ({ current: undefined as Config | undefined, problem: undefined as Error | undefined }));
vi.mock('../../lib/root', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../lib/root')>();
  return {
    ...original,
    getConfig: () => {
      if (processConfig.problem) throw processConfig.problem;
      return processConfig.current ?? original.getConfig();
    },
  };
});
afterEach(() => {
  processConfig.current = undefined;
  processConfig.problem = undefined;
});

const { configOf, problemsOf, remove } = configFiles('peer');
afterAll(remove);

/** The address of a request from the socket `peer`, carrying `forwarded` as X-Forwarded-For, on a server trusting `trusted`. */
function addressOf(trusted: string[] | undefined, peer: string | undefined, forwarded?: string): string {
  processConfig.current = configOf(trusted === undefined ? undefined : { trustedProxies: trusted });
  const headers = new Headers();
  if (peer !== undefined) headers.set(PEER_HEADER, peer);
  if (forwarded !== undefined) headers.set('x-forwarded-for', forwarded);
  return clientAddress(headers);
}

type Case = { name: string; trusted?: string[]; peer?: string; forwarded?: string; expected: string };

describe('with no trustedProxies, X-Forwarded-For is never believed', () => {
  it.each<Case>([
    { name: 'loopback peer claiming a public address', peer: '127.0.0.1', forwarded: '203.0.113.9', expected: '127.0.0.1' },
    { name: 'loopback peer, trustedProxies written as []', trusted: [], peer: '127.0.0.1', forwarded: '203.0.113.9', expected: '127.0.0.1' },
    { name: 'another loopback address', peer: '127.0.0.5', forwarded: '203.0.113.9', expected: '127.0.0.5' },
    { name: 'IPv6 loopback', peer: '::1', forwarded: '203.0.113.9', expected: '::1' },
    { name: 'IPv4-mapped loopback', peer: '::ffff:127.0.0.1', forwarded: '203.0.113.9', expected: '127.0.0.1' },
    { name: 'private network peer', peer: '10.0.0.2', forwarded: '203.0.113.9', expected: '10.0.0.2' },
    { name: 'unique-local IPv6 peer', peer: 'fd00::1', forwarded: '198.51.100.9', expected: 'fd00::1' },
    { name: 'public peer claiming loopback', peer: '198.51.100.7', forwarded: '127.0.0.1', expected: '198.51.100.7' },
    { name: 'no header at all', peer: '198.51.100.7', expected: '198.51.100.7' },
    { name: 'no socket address (a handler called directly)', forwarded: '203.0.113.9', expected: 'unknown' },
    { name: 'a socket address that is not one', peer: 'garbage', forwarded: '203.0.113.9', expected: 'unknown' },
  ])('$name', ({ trusted, peer, forwarded, expected }) => {
    expect(addressOf(trusted, peer, forwarded)).toBe(expected);
  });
});

describe('from a proxy named in trustedProxies, the address the proxy saw', () => {
  it.each<Case>([
    { name: 'trusted loopback proxy', trusted: ['127.0.0.1'], peer: '127.0.0.1', forwarded: '203.0.113.9', expected: '203.0.113.9' },
    { name: 'trusted proxy in its IPv4-mapped form', trusted: ['127.0.0.1'], peer: '::ffff:127.0.0.1', forwarded: '203.0.113.9', expected: '203.0.113.9' },
    { name: 'trusted entry written IPv4-mapped', trusted: ['::ffff:127.0.0.1'], peer: '127.0.0.1', forwarded: '203.0.113.9', expected: '203.0.113.9' },
    { name: 'only the address named: 127.0.0.2 is not 127.0.0.1', trusted: ['127.0.0.1'], peer: '127.0.0.2', forwarded: '203.0.113.9', expected: '127.0.0.2' },
    { name: 'a range', trusted: ['10.0.0.0/8'], peer: '10.20.30.40', forwarded: '203.0.113.9', expected: '203.0.113.9' },
    { name: 'outside the range', trusted: ['10.0.0.0/8'], peer: '11.0.0.1', forwarded: '203.0.113.9', expected: '11.0.0.1' },
    { name: 'trusted proxy, no X-Forwarded-For', trusted: ['127.0.0.1'], peer: '127.0.0.1', expected: '127.0.0.1' },
    { name: 'trusted proxy, blank X-Forwarded-For', trusted: ['127.0.0.1'], peer: '127.0.0.1', forwarded: ' ', expected: '127.0.0.1' },
    { name: 'the proxy appends: the client cannot choose by writing its own entry first', trusted: ['127.0.0.1'], peer: '127.0.0.1', forwarded: '127.0.0.1, 198.51.100.7', expected: '198.51.100.7' },
  ])('$name', ({ trusted, peer, forwarded, expected }) => {
    expect(addressOf(trusted, peer, forwarded)).toBe(expected);
  });
});

describe('chains: the rightmost entry that is not a trusted proxy', () => {
  const chain = ['127.0.0.1', '10.0.0.0/8'];
  it.each<Case>([
    { name: 'client, then a trusted inner proxy', trusted: chain, peer: '127.0.0.1', forwarded: '198.51.100.7, 10.0.0.2', expected: '198.51.100.7' },
    { name: 'what the client wrote before its own entry is ignored', trusted: chain, peer: '127.0.0.1', forwarded: '203.0.113.9, 198.51.100.7, 10.0.0.2', expected: '198.51.100.7' },
    { name: 'the inner proxy is not trusted: its word is the last believed', trusted: ['127.0.0.1'], peer: '127.0.0.1', forwarded: '198.51.100.7, 10.0.0.2', expected: '10.0.0.2' },
    { name: 'every entry trusted: the farthest one', trusted: chain, peer: '127.0.0.1', forwarded: '10.0.0.3, 10.0.0.2', expected: '10.0.0.3' },
    { name: 'several headers read as one list', trusted: chain, peer: '127.0.0.1', forwarded: '198.51.100.7, 10.0.0.2,10.0.0.9', expected: '198.51.100.7' },
    { name: 'garbage as the only entry: the proxy', trusted: chain, peer: '127.0.0.1', forwarded: 'not-an-address', expected: '127.0.0.1' },
    { name: 'garbage behind a trusted hop: that hop', trusted: chain, peer: '127.0.0.1', forwarded: '198.51.100.7, unknown, 10.0.0.2', expected: '10.0.0.2' },
    { name: 'garbage left of the client: not reached', trusted: chain, peer: '127.0.0.1', forwarded: 'bogus, 198.51.100.7, 10.0.0.2', expected: '198.51.100.7' },
    { name: 'an empty entry is garbage too', trusted: chain, peer: '127.0.0.1', forwarded: '198.51.100.7, , 10.0.0.2', expected: '10.0.0.2' },
    { name: 'a trailing comma', trusted: chain, peer: '127.0.0.1', forwarded: '198.51.100.7,', expected: '127.0.0.1' },
    { name: 'an address with a port is not an address', trusted: chain, peer: '127.0.0.1', forwarded: '198.51.100.7:5555', expected: '127.0.0.1' },
    { name: 'a bracketed IPv6 address is not an address', trusted: chain, peer: '127.0.0.1', forwarded: '[2001:db8::7]', expected: '127.0.0.1' },
    { name: 'a long garbage entry never becomes the address', trusted: chain, peer: '127.0.0.1', forwarded: `${'x'.repeat(500)}, 10.0.0.2`, expected: '10.0.0.2' },
    { name: 'IPv6 proxy and client', trusted: ['::1'], peer: '::1', forwarded: '2001:db8::7', expected: '2001:db8::7' },
    { name: 'IPv6 range, client written long and in capitals', trusted: ['fd00::/8'], peer: 'fd12::3', forwarded: '2001:DB8:0:0::7', expected: '2001:db8::7' },
    { name: 'IPv6 chain', trusted: ['::1', 'fd00::/8'], peer: '::1', forwarded: '2001:db8::7, fd00::2', expected: '2001:db8::7' },
    { name: 'IPv4-mapped hop matches its IPv4 range', trusted: chain, peer: '::ffff:10.1.2.3', forwarded: '198.51.100.8, ::ffff:10.0.0.9', expected: '198.51.100.8' },
    { name: 'IPv4-mapped client is its IPv4 address', trusted: chain, peer: '127.0.0.1', forwarded: '::ffff:198.51.100.8', expected: '198.51.100.8' },
    { name: 'IPv4-mapped client in hex is its IPv4 address', trusted: chain, peer: '127.0.0.1', forwarded: '::ffff:c633:6408', expected: '198.51.100.8' },
  ])('$name', ({ trusted, peer, forwarded, expected }) => {
    expect(addressOf(trusted, peer, forwarded)).toBe(expected);
  });
});

describe('one client cannot pass for many', () => {
  const rotating = Array.from({ length: 60 }, (_, i) => `203.0.113.${i + 1}`);

  it.each<Omit<Case, 'forwarded' | 'expected'> & { expected: string }>([
    { name: 'from loopback, no trustedProxies', peer: '127.0.0.1', expected: '127.0.0.1' },
    { name: 'from a private network, no trustedProxies', peer: '192.168.1.20', expected: '192.168.1.20' },
    { name: 'from a public address, loopback trusted', trusted: ['127.0.0.1'], peer: '198.51.100.7', expected: '198.51.100.7' },
  ])('rotating X-Forwarded-For $name: one address', ({ trusted, peer, expected }) => {
    const seen = new Set(rotating.map((forwarded) => addressOf(trusted, peer, forwarded)));
    expect([...seen]).toEqual([expected]);
  });

  it("and so gets the stream's slots of one address, not every slot of the server", () => {
    processConfig.current = configOf(undefined);
    const limits = { maxClients: 500, maxClientsPerAddress: 3 };
    const parts = createParts();
    const admissions = rotating.slice(0, 10).map((forwarded) => admitStreamClient(parts, clientAddress(new Headers({ [PEER_HEADER]: '127.0.0.1', 'x-forwarded-for': forwarded })), limits));
    expect(admissions.map((admission) => admission.ok)).toEqual([true, true, true, false, false, false, false, false, false, false]);
    for (const admission of admissions) if (admission.ok) admission.release();
  });
});

describe('the rule comes from the config, and fails closed', () => {
  it('LEASEHOLD_TRUSTED_PROXIES replaces the file\'s trustedProxies', () => {
    const config = configOf({ trustedProxies: ['10.0.0.0/8'] }, { LEASEHOLD_TRUSTED_PROXIES: ' 127.0.0.1 , fd00::/8,' });
    expect(config.trustedProxies).toEqual(['127.0.0.1', 'fd00::/8']);
    processConfig.current = config;
    expect(clientAddress(new Headers({ [PEER_HEADER]: '127.0.0.1', 'x-forwarded-for': '203.0.113.9' }))).toBe('203.0.113.9');
    expect(clientAddress(new Headers({ [PEER_HEADER]: '10.0.0.2', 'x-forwarded-for': '203.0.113.9' }))).toBe('10.0.0.2');
  });

  it.each<{ name: string; file: unknown; env?: Record<string, string>; expected: string[] }>([
    { name: 'none anywhere', file: undefined, expected: [] },
    { name: 'the file\'s list', file: { trustedProxies: ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'] }, expected: ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'] },
    { name: 'a blank LEASEHOLD_TRUSTED_PROXIES is unset', file: { trustedProxies: ['10.0.0.0/8'] }, env: { LEASEHOLD_TRUSTED_PROXIES: '  ' }, expected: ['10.0.0.0/8'] },
    { name: 'the environment alone', file: undefined, env: { LEASEHOLD_TRUSTED_PROXIES: '::1' }, expected: ['::1'] },
  ])('trustedProxies: $name', ({ file, env, expected }) => {
    expect(configOf(file, env).trustedProxies).toEqual(expected);
  });

  it('a config that cannot be read trusts nobody', () => {
    processConfig.problem = new ConfigError('leasehold.config.json', ['pollMs: expected a number of milliseconds, found "soon"']);
    expect(clientAddress(new Headers({ [PEER_HEADER]: '127.0.0.1', 'x-forwarded-for': '203.0.113.9' }))).toBe('127.0.0.1');
  });

  it('a new config takes effect: the rule is cached by its value, not once for the process', () => {
    const request = () => clientAddress(new Headers({ [PEER_HEADER]: '127.0.0.1', 'x-forwarded-for': '203.0.113.9' }));
    processConfig.current = configOf({ trustedProxies: ['127.0.0.1'] });
    expect(request()).toBe('203.0.113.9');
    processConfig.current = configOf(undefined);
    expect(request()).toBe('127.0.0.1');
    processConfig.current = configOf(undefined, { LEASEHOLD_TRUSTED_PROXIES: '127.0.0.0/8' });
    expect(request()).toBe('203.0.113.9');
  });
});

describe('config errors name trustedProxies and the bad entry', () => {
  const EXPECTED = 'expected an IP address or a CIDR range such as "10.0.0.0/8" or "fd00::/8"';
  const EXPECTED_LIST = 'expected a comma-separated list of IP addresses and CIDR ranges such as "127.0.0.1,10.0.0.0/8,fd00::/8"';
  it.each<{ name: string; file?: unknown; env?: Record<string, string>; expected: string[] }>([
    { name: 'not a list', file: { trustedProxies: '127.0.0.1' }, expected: ['trustedProxies: expected a list of IP addresses and CIDR ranges such as ["127.0.0.1", "10.0.0.0/8"], found "127.0.0.1"'] },
    { name: 'not text', file: { trustedProxies: ['127.0.0.1', 8] }, expected: [`trustedProxies[1]: ${EXPECTED}, found 8`] },
    { name: 'a host name', file: { trustedProxies: ['proxy.internal'] }, expected: [`trustedProxies[0]: ${EXPECTED}, found "proxy.internal", which is not one (host names are not looked up)`] },
    { name: 'a malformed CIDR', file: { trustedProxies: ['10.0.0/8'] }, expected: [`trustedProxies[0]: ${EXPECTED}, found "10.0.0/8", whose address is not an IPv4 or IPv6 address`] },
    { name: 'an IPv4 prefix too long', file: { trustedProxies: ['127.0.0.1', '10.0.0.0/33'] }, expected: [`trustedProxies[1]: ${EXPECTED}, found "10.0.0.0/33", whose prefix length is not a whole number from 0 to 32 (IPv4)`] },
    { name: 'an IPv6 prefix too long', file: { trustedProxies: ['fd00::/129'] }, expected: [`trustedProxies[0]: ${EXPECTED}, found "fd00::/129", whose prefix length is not a whole number from 0 to 128 (IPv6)`] },
    { name: 'no prefix after the slash', file: { trustedProxies: ['10.0.0.0/'] }, expected: [`trustedProxies[0]: ${EXPECTED}, found "10.0.0.0/", whose prefix length is not a whole number from 0 to 32 (IPv4)`] },
    { name: 'an empty entry', file: { trustedProxies: [''] }, expected: [`trustedProxies[0]: ${EXPECTED}, found "", which is not one`] },
    { name: 'every bad entry, each on its own', file: { trustedProxies: ['10.0.0.0/33', '127.0.0.1', 'x'] }, expected: [`trustedProxies[0]: ${EXPECTED}, found "10.0.0.0/33", whose prefix length is not a whole number from 0 to 32 (IPv4)`, `trustedProxies[2]: ${EXPECTED}, found "x", which is not one (host names are not looked up)`] },
    { name: 'the environment variable, a malformed CIDR', env: { LEASEHOLD_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/33' }, expected: [`environment variable LEASEHOLD_TRUSTED_PROXIES: ${EXPECTED_LIST}, found "10.0.0.0/33" (entry 2), whose prefix length is not a whole number from 0 to 32 (IPv4)`] },
    { name: 'the environment variable, a host name', env: { LEASEHOLD_TRUSTED_PROXIES: 'proxy.internal' }, expected: [`environment variable LEASEHOLD_TRUSTED_PROXIES: ${EXPECTED_LIST}, found "proxy.internal" (entry 1), which is not one (host names are not looked up)`] },
  ])('$name', ({ file, env, expected }) => {
    expect(problemsOf(file ?? {}, env)).toEqual(expected);
  });
});
