// IP addresses and CIDR ranges as a person writes them (the config's trustedProxies), parsed
// without any I/O, for the config's schema (lib/config/schema.ts) and for deciding whose word
// X-Forwarded-For is (lib/api/peer.ts). Matching is node:net's BlockList: it reads addresses as
// the operating system does (no "0x7f.1" or "127.1"), and an IPv4 range matches an
// IPv4-mapped IPv6 address (::ffff:10.0.0.1) and the other way round.
import { BlockList, isIP } from 'node:net';

export type AddressRange = { address: string; prefix: number; family: 'ipv4' | 'ipv6' };

/**
 * `10.0.0.0/8`, `fd00::/8`, or one address (`127.0.0.1`, `::1`: the range of that address alone).
 * Else `problem`: why not, as words that follow `found "<text>"` in a sentence.
 */
export function parseAddressRange(text: string): { range: AddressRange } | { problem: string } {
  const value = text.trim();
  const slash = value.indexOf('/');
  const address = slash < 0 ? value : value.slice(0, slash);
  const family = isIP(address);
  if (family === 0) {
    if (slash >= 0) return { problem: 'whose address is not an IPv4 or IPv6 address' };
    // A name would have to be looked up, and a proxy's name can change address under it.
    return { problem: /[a-z]/i.test(value) && /^[a-z0-9.-]+$/i.test(value) ? 'which is not one (host names are not looked up)' : 'which is not one' };
  }
  const bits = family === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(bits) : value.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > bits) {
    return { problem: `whose prefix length is not a whole number from 0 to ${bits} (${family === 4 ? 'IPv4' : 'IPv6'})` };
  }
  return { range: { address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' } };
}

/**
 * An address in one form per address, or null when the text is not an IP address: IPv6
 * compressed and in lower case, an IPv4-mapped address as its IPv4 address, an interface
 * zone ("%eth0") dropped. So that one client is one key, however its address is written.
 */
export function canonicalAddress(text: string): string | null {
  const value = text.trim();
  const family = isIP(value);
  if (family === 4) return value;
  if (family !== 6) return null;
  let host: string;
  try {
    // The WHATWG URL parser writes IPv6 in its canonical form (RFC 5952), dotted tails included.
    host = new URL(`http://[${value.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** A set of address ranges: whether an address (any form canonicalAddress reads) is in one of them. */
export class AddressSet {
  private readonly list = new BlockList();
  readonly size: number;

  /** Entries that are not ranges (parseAddressRange) are left out: never matched rather than guessed at. */
  constructor(entries: readonly string[]) {
    let size = 0;
    for (const entry of entries) {
      const parsed = parseAddressRange(entry);
      if (!('range' in parsed)) continue;
      this.list.addSubnet(parsed.range.address, parsed.range.prefix, parsed.range.family);
      size++;
    }
    this.size = size;
  }

  has(address: string): boolean {
    if (this.size === 0) return false;
    const canonical = canonicalAddress(address);
    if (canonical === null) return false;
    return this.list.check(canonical, isIP(canonical) === 4 ? 'ipv4' : 'ipv6');
  }
}
