// The only way webhook requests leave the process: an undici Agent whose connector resolves
// the host itself, vets every address, and connects to the address it vetted.
//
// A webhook URL is typed by a user, so without this it is a way to make the server call
// anything it can reach: cloud metadata (169.254.169.254), the database, an admin port on
// localhost. Checking the URL's host name is not enough (a public name can resolve to
// 10.0.0.5, and resolve differently a second later: DNS rebinding), so the check is on the
// resolved addresses, and the socket is opened to the checked address, never to the name.
// TLS still verifies the certificate against the name (SNI and identity check).
//
// Only global unicast addresses pass, unless the address is inside one of alerts.allowCidrs
// (a receiver on the LAN, Alertmanager on localhost). Plain http passes only to an address
// inside alerts.allowCidrs: on the internet, https.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';
import { parseAddressRange } from '../../net/address-range';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

export const EGRESS_REFUSED = 'LEASEHOLD_EGRESS_REFUSED';

/** A connection Leasehold would not make; thrown before any packet is sent. */
export class EgressRefusedError extends Error {
  readonly code = EGRESS_REFUSED;
  constructor(
    message: string,
    readonly host: string,
    readonly address: string | null,
  ) {
    super(message);
    this.name = 'EgressRefusedError';
  }
}

export type ResolvedAddress = { address: string; family: number };
/** Resolves a host name to every address it has (like dns.lookup with `all: true`). */
export type EgressLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export type EgressOptions = {
  /** alerts.allowCidrs: ranges that may be reached although they are not global unicast, and over plain http. */
  allowCidrs: string[];
  lookup?: EgressLookup;
  /** For the look-up, then again for the TCP/TLS handshake. */
  connectTimeoutMs?: number;
  /** Certificate authorities to trust instead of Node's bundle (receivers behind a private CA). */
  ca?: string | Buffer | (string | Buffer)[];
  /** Opens the connection to a vetted address; default undici's own. Tests wrap it to see what would be connected. */
  connector?: buildConnector.connector;
};

const SETTING = 'alerts.allowCidrs';
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * An address as ipaddr.js should see it. ipaddr.js reads an IPv6 address that ends in a
 * dotted quad as IPv4-mapped whatever its first 96 bits ("::10.0.0.1" is ::a00:1, not
 * ::ffff:a00:1), so IPv6 text is first put in canonical form by the WHATWG URL parser, the
 * one undici uses. A zone ("%eth0") names an interface, not an address: it is dropped.
 */
function parseAddress(text: string): Address {
  if (isIP(text) !== 6) return ipaddr.IPv4.parse(text);
  const bare = text.replace(/%.*$/, '');
  return ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
}

const defaultLookup: EgressLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * The ranges of alerts.allowCidrs, parsed. Each entry is `address/prefix` (IPv4 in four
 * decimal parts, or IPv6), read by the one parser of ranges (lib/net/address-range.ts, which
 * reads trustedProxies too); here the prefix length is required. The error names the entry and
 * what is wrong with it.
 */
export function validateAllowCidrs(list: readonly string[]): Cidr[] {
  if (!Array.isArray(list)) throw new Error(`${SETTING} must be a list of CIDR ranges such as "10.0.0.0/8" or "fd00::/8"`);
  return list.map((entry, i) => {
    const where = `${SETTING}[${i}]`;
    if (typeof entry !== 'string') throw new Error(`${where} must be a CIDR range such as "10.0.0.0/8", not ${typeof entry}`);
    const text = entry.trim();
    if (!text.includes('/')) {
      throw new Error(`${where} "${entry.slice(0, 80)}" is not a CIDR range: it needs a prefix length (write "${text.slice(0, 60)}/32" for one IPv4 address, "/128" for one IPv6 address)`);
    }
    // node:net's reading of addresses: no "0x7f.1" or "2130706433" for IPv4 (ipaddr.js takes them; a config should say what it means).
    const parsed = parseAddressRange(text);
    if (!('range' in parsed)) {
      throw new Error(`${where} "${entry.slice(0, 80)}" is not a CIDR range: expected an IPv4 or IPv6 address, "/" and a prefix length (0-32 for IPv4, 0-128 for IPv6)`);
    }
    return [parseAddress(parsed.range.address), parsed.range.prefix] as Cidr;
  });
}

function inside(address: Address, allow: readonly Cidr[]): boolean {
  return allow.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
}

const V4_REASONS: Record<string, string> = {
  unspecified: 'an unspecified address (0.0.0.0/8)',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (169.254.0.0/16, where cloud metadata services answer)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private address',
  reserved: 'a reserved, benchmarking or documentation address',
  as112: 'an AS112 address',
  amt: 'an AMT relay address',
};

const V6_REASONS: Record<string, string> = {
  unspecified: 'the unspecified address (::)',
  linkLocal: 'a link-local address (fe80::/10)',
  multicast: 'a multicast address',
  loopback: 'a loopback address',
  uniqueLocal: 'a unique-local address (fc00::/7)',
  deprecatedSiteLocal: 'a site-local address (fec0::/10)',
  discard: 'a discard-only address (100::/64)',
  rfc6145: 'an IPv4-translated address (::ffff:0:0:0/96)',
  '6to4': 'a 6to4 address (2002::/16), which carries an IPv4 address',
  teredo: 'a Teredo address (2001::/32), which carries an IPv4 address',
  benchmarking: 'a benchmarking address (2001:2::/48)',
  amt: 'an AMT relay address',
  as112v6: 'an AS112 address',
  deprecatedOrchid: 'an ORCHID address',
  orchid2: 'an ORCHIDv2 address',
  droneRemoteIdProtocolEntityTags: 'a DRIP entity tag address',
  segmentRouting: 'a segment routing address (5f00::/16)',
  reserved: 'a reserved or documentation address',
};

const GLOBAL_UNICAST_V6: Cidr = ipaddr.parseCIDR('2000::/3');
const IPV4_COMPATIBLE: Cidr = ipaddr.parseCIDR('::/96');

/** Why an address is not a global unicast one, or null when it is. IPv4-mapped IPv6 addresses are judged by their IPv4 address. */
export function nonGlobalReason(text: string): string | null {
  if (isIP(text) === 0) return 'not an IP address';
  const address = parseAddress(text);
  if (address.kind() === 'ipv4') {
    const range = address.range();
    return range === 'unicast' ? null : (V4_REASONS[range] ?? `a special-purpose address (${range})`);
  }
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) {
    const v4 = v6.toIPv4Address();
    const inner = nonGlobalReason(v4.toString());
    return inner === null ? null : `an IPv4-mapped address of ${v4.toString()}, ${inner}`;
  }
  const range = v6.range();
  if (range === 'rfc6052') {
    const bytes = v6.toByteArray();
    return `a NAT64 address (64:ff9b::/96), which a translator forwards to ${bytes.slice(12).join('.')}`;
  }
  if (range !== 'unicast') return V6_REASONS[range] ?? `a special-purpose address (${range})`;
  // ipaddr.js calls everything it has no name for "unicast"; only 2000::/3 is global.
  if (v6.match(IPV4_COMPATIBLE)) return 'an IPv4-compatible address (::/96, deprecated)';
  if (!v6.match(GLOBAL_UNICAST_V6)) return 'not a global unicast address (outside 2000::/3)';
  return null;
}

type Verdict = { ok: true; connectTo: string } | { ok: false; kind: 'not-ip' | 'not-global' | 'plain-http'; reason: string };

/**
 * The address to connect to for one resolved address, or why it is refused. An IPv4-mapped
 * address is connected to as IPv4, and matches allowCidrs in either form.
 */
function vetAddress(text: string, protocol: string, allow: readonly Cidr[]): Verdict {
  if (isIP(text) === 0) return { ok: false, kind: 'not-ip', reason: 'not an IP address' };
  const reason = nonGlobalReason(text);
  const parsed = parseAddress(text);
  const mapped = parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : null;
  const allowed = inside(parsed, allow) || (mapped !== null && inside(mapped, allow));
  if (reason !== null && !allowed) return { ok: false, kind: 'not-global', reason };
  if (protocol === 'http:' && !allowed) return { ok: false, kind: 'plain-http', reason: `plain http is only allowed to addresses in ${SETTING}` };
  return { ok: true, connectTo: (mapped ?? parsed).toString() };
}

function refusal(host: string, address: string, literal: boolean, verdict: Exclude<Verdict, { ok: true }>): EgressRefusedError {
  const subject = literal ? `${host} is` : `${host} resolves to ${address},`;
  const message =
    verdict.kind === 'not-ip'
      ? `refused: ${host} resolves to "${address.slice(0, 80)}", which is not an IP address`
      : verdict.kind === 'not-global'
        ? `refused: ${subject} ${verdict.reason} not in ${SETTING}`
        : `refused: http://${host} ${literal ? '' : `(${address}) `}is plain http, which is only allowed to addresses in ${SETTING}: use https`;
  return new EgressRefusedError(message, host, address);
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The one address to connect to for `hostname`, after resolving it (unless it is an IP
 * literal) and vetting every address it has: one bad address refuses the host, since the
 * next look-up could hand out that one. Throws EgressRefusedError, or the look-up's error.
 */
export async function vetDestination(
  hostname: string,
  protocol: string,
  allow: readonly Cidr[],
  lookup: EgressLookup = defaultLookup,
  timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
): Promise<string> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new EgressRefusedError(`refused: ${protocol} is not http or https`, host, null);
  }
  const literal = isIP(host) !== 0;
  const addresses = literal ? [{ address: host, family: isIP(host) }] : await withTimeout(lookup(host), timeoutMs, `looking up ${host}`);
  if (addresses.length === 0) throw new Error(`looking up ${host} gave no address`);
  let connectTo: string | null = null;
  for (const { address } of addresses) {
    const verdict = vetAddress(address, protocol, allow);
    if (!verdict.ok) throw refusal(host, address, literal, verdict);
    connectTo ??= verdict.connectTo;
  }
  return connectTo!;
}

/**
 * An Agent for webhook deliveries: every new connection is vetted as above. Connections are
 * kept alive per origin as usual; each was vetted when it was opened.
 */
export function createEgressAgent(options: EgressOptions): Agent {
  const allow = validateAllowCidrs(options.allowCidrs);
  const lookup = options.lookup ?? defaultLookup;
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const connect = options.connector ?? buildConnector({ timeout: timeoutMs, ...(options.ca ? { ca: options.ca } : {}) });
  const connector: buildConnector.connector = (opts, callback) => {
    vetDestination(opts.hostname, opts.protocol, allow, lookup, timeoutMs).then(
      (address) =>
        connect(
          {
            ...opts,
            hostname: address,
            // The certificate is checked against the name that was asked for (no SNI for an IP literal).
            servername: isIP(opts.hostname.replace(/^\[(.*)\]$/, '$1')) ? undefined : opts.hostname,
          },
          callback,
        ),
      (error: Error) => callback(error, null),
    );
  };
  return new Agent({ connect: connector });
}
