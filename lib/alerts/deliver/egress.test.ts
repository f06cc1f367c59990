import { describe, expect, it, vi } from 'vitest';
import { EgressRefusedError, nonGlobalReason, validateAllowCidrs, vetDestination, type EgressLookup } from './egress';

const NONE = validateAllowCidrs([]);

describe('nonGlobalReason: only global unicast passes', () => {
  it.each([
    // IPv4
    ['10.0.0.5', /private/],
    ['10.255.255.255', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.254', /private/],
    ['192.168.1.1', /private/],
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['169.254.169.254', /link-local.*metadata/],
    ['169.254.0.1', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.254', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['240.0.0.1', /reserved/],
    ['192.0.0.8', /reserved/],
    ['192.0.2.1', /documentation/],
    ['198.51.100.7', /documentation/],
    ['203.0.113.9', /documentation/],
    ['198.18.0.1', /benchmarking/],
    // IPv6
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['febf::1', /link-local/],
    ['fc00::1', /unique-local/],
    ['fd00::1', /unique-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['2001:db8::1', /documentation/],
    ['3fff::1', /reserved/],
    ['100::1', /discard/],
    ['64:ff9b::a00:1', /NAT64.*10\.0\.0\.1/],
    ['64:ff9b::8.8.8.8', /NAT64/],
    ['64:ff9b:1::1', /NAT64/],
    ['2002:a00:1::1', /6to4/],
    ['2001:0:4136:e378::1', /Teredo/],
    ['::ffff:0:a00:1', /IPv4-translated/],
    ['::10.0.0.1', /IPv4-compatible/],
    ['::8.8.8.8', /IPv4-compatible/],
    ['4000::1', /outside 2000::\/3/],
    ['5f00::1', /segment routing/],
    // IPv4-mapped: judged by the IPv4 address inside
    ['::ffff:10.0.0.1', /IPv4-mapped address of 10\.0\.0\.1, a private address/],
    ['::ffff:127.0.0.1', /IPv4-mapped.*loopback/],
    ['::ffff:169.254.169.254', /IPv4-mapped.*link-local/],
    ['::ffff:a9fe:a9fe', /IPv4-mapped.*169\.254\.169\.254/],
    ['not-an-ip', /not an IP address/],
  ])('%s is refused: %s', (address, reason) => {
    expect(nonGlobalReason(address)).toMatch(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.169.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8'])(
    '%s is global unicast',
    (address) => {
      expect(nonGlobalReason(address)).toBeNull();
    },
  );
});

const lookupOf =
  (...addresses: string[]): EgressLookup =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('vetDestination', () => {
  it('refuses a name that resolves to a private address, naming host, address and reason', async () => {
    const refusal = vetDestination('hooks.example', 'https:', NONE, lookupOf('10.0.0.5'));
    await expect(refusal).rejects.toBeInstanceOf(EgressRefusedError);
    await expect(refusal).rejects.toThrow('refused: hooks.example resolves to 10.0.0.5, a private address not in alerts.allowCidrs');
  });

  it('refuses when any one of the addresses is not global (the next look-up could hand out that one)', async () => {
    await expect(vetDestination('hooks.example', 'https:', NONE, lookupOf('93.184.216.34', '169.254.169.254'))).rejects.toThrow(/169\.254\.169\.254, a link-local/);
    await expect(vetDestination('hooks.example', 'https:', NONE, lookupOf('2606:4700::1', 'fd00::1'))).rejects.toThrow(/fd00::1, a unique-local/);
  });

  it('passes a public name over https, connecting to the first address it vetted', async () => {
    await expect(vetDestination('hooks.example', 'https:', NONE, lookupOf('93.184.216.34', '2606:4700::1'))).resolves.toBe('93.184.216.34');
    await expect(vetDestination('hooks.example', 'https:', NONE, lookupOf('::ffff:8.8.8.8'))).resolves.toBe('8.8.8.8');
  });

  it('does not look up an IP literal', async () => {
    const lookup = vi.fn(lookupOf('93.184.216.34'));
    await expect(vetDestination('127.0.0.1', 'https:', NONE, lookup)).rejects.toThrow('refused: 127.0.0.1 is a loopback address not in alerts.allowCidrs');
    await expect(vetDestination('[::1]', 'https:', NONE, lookup)).rejects.toThrow('refused: ::1 is a loopback address');
    await expect(vetDestination('8.8.8.8', 'https:', NONE, lookup)).resolves.toBe('8.8.8.8');
    expect(lookup).not.toHaveBeenCalled();
  });

  it('lets allowCidrs through, in IPv4 and IPv4-mapped form, and nothing beside them', async () => {
    const allow = validateAllowCidrs(['127.0.0.1/32', '10.20.0.0/16', 'fd00:1::/32']);
    await expect(vetDestination('127.0.0.1', 'http:', allow)).resolves.toBe('127.0.0.1');
    await expect(vetDestination('127.0.0.2', 'http:', allow)).rejects.toThrow(/127\.0\.0\.2 is a loopback address not in alerts\.allowCidrs/);
    await expect(vetDestination('hooks.lan', 'https:', allow, lookupOf('10.20.3.4'))).resolves.toBe('10.20.3.4');
    await expect(vetDestination('hooks.lan', 'https:', allow, lookupOf('10.21.3.4'))).rejects.toThrow(/10\.21\.3\.4, a private address/);
    await expect(vetDestination('hooks.lan', 'https:', allow, lookupOf('::ffff:10.20.0.9'))).resolves.toBe('10.20.0.9');
    await expect(vetDestination('hooks.lan', 'https:', allow, lookupOf('fd00:1::5'))).resolves.toBe('fd00:1::5');
    await expect(vetDestination('hooks.lan', 'https:', allow, lookupOf('fd00:2::5'))).rejects.toThrow(/unique-local/);
  });

  it('an IPv4-mapped range in allowCidrs covers the mapped form only', async () => {
    const allow = validateAllowCidrs(['::ffff:10.0.0.0/104']);
    await expect(vetDestination('hooks.lan', 'https:', allow, lookupOf('::ffff:10.0.0.1'))).resolves.toBe('10.0.0.1');
    await expect(vetDestination('hooks.lan', 'https:', allow, lookupOf('10.0.0.1'))).rejects.toThrow(/private/);
  });

  it('refuses plain http except to allowCidrs', async () => {
    await expect(vetDestination('hooks.example', 'http:', NONE, lookupOf('93.184.216.34'))).rejects.toThrow(
      'refused: http://hooks.example (93.184.216.34) is plain http, which is only allowed to addresses in alerts.allowCidrs: use https',
    );
    await expect(vetDestination('8.8.8.8', 'http:', NONE)).rejects.toThrow(/plain http/);
    const allow = validateAllowCidrs(['203.0.113.0/24']);
    await expect(vetDestination('hooks.example', 'http:', allow, lookupOf('203.0.113.5'))).resolves.toBe('203.0.113.5');
  });

  it('refuses other schemes, and garbage from the look-up', async () => {
    await expect(vetDestination('hooks.example', 'ftp:', NONE, lookupOf('93.184.216.34'))).rejects.toThrow(/ftp: is not http or https/);
    await expect(vetDestination('hooks.example', 'https:', NONE, lookupOf('evil'))).rejects.toThrow(/which is not an IP address/);
  });

  it('passes on a failed look-up as a failure, not a refusal (it may work next time)', async () => {
    const failing: EgressLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example'), { code: 'ENOTFOUND' });
    };
    const result = vetDestination('hooks.example', 'https:', NONE, failing);
    await expect(result).rejects.toThrow(/ENOTFOUND/);
    await expect(result).rejects.not.toBeInstanceOf(EgressRefusedError);
    await expect(vetDestination('hooks.example', 'https:', NONE, lookupOf())).rejects.toThrow(/gave no address/);
  });

  it('gives up a look-up that does not answer', async () => {
    const hanging: EgressLookup = () => new Promise(() => {});
    await expect(vetDestination('hooks.example', 'https:', NONE, hanging, 20)).rejects.toThrow('looking up hooks.example took longer than 20 ms');
  });
});

describe('validateAllowCidrs', () => {
  it('parses IPv4 and IPv6 ranges', () => {
    expect(validateAllowCidrs([' 10.0.0.0/8', '127.0.0.1/32', '::1/128', 'fd00::/8', '0.0.0.0/0'])).toHaveLength(5);
  });

  it.each([
    ['10.0.0.1', /needs a prefix length.*"10\.0\.0\.1\/32"/],
    ['10.0.0.0/33', /not a CIDR range/],
    ['10.0.0/8', /not a CIDR range/],
    ['0x0a.0.0.0/8', /not a CIDR range/],
    ['hooks.example/32', /not a CIDR range/],
    ['fd00::/129', /not a CIDR range/],
    ['10.0.0.0/-1', /not a CIDR range/],
    ['10.0.0.0/8/8', /not a CIDR range/],
    ['', /needs a prefix length/],
  ])('refuses %s, naming the entry', (entry, message) => {
    expect(() => validateAllowCidrs(['127.0.0.1/32', entry])).toThrow(message);
    expect(() => validateAllowCidrs(['127.0.0.1/32', entry])).toThrow(/alerts\.allowCidrs\[1\]/);
  });

  it('refuses what is not a list of strings', () => {
    expect(() => validateAllowCidrs('10.0.0.0/8' as unknown as string[])).toThrow(/must be a list/);
    expect(() => validateAllowCidrs([8 as unknown as string])).toThrow(/alerts\.allowCidrs\[0\] must be a CIDR range/);
  });
});
