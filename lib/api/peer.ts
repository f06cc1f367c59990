// The address a request came from. Route handlers get a fetch Request, without the socket;
// lib/api/unrepresentable-methods.ts, in front of Next, stamps each request with its socket's
// address under PEER_HEADER (overwriting whatever a client sent under that name).
//
// That address is the client's, unless it is a proxy named in the config's trustedProxies
// (LEASEHOLD_TRUSTED_PROXIES). The sign-in limits, the stream's per-address slots, the embedded
// demo's loopback rule and the audit log count by it, so X-Forwarded-For is believed only from
// a named proxy: from anyone else it is the client's own words, and any client on this machine
// or a private network could pass for as many addresses as it liked. None is named by default.
//
// From a named proxy, X-Forwarded-For is read from the right, the end each proxy appends to:
// the first entry that is not itself a named proxy is the client (what the client wrote before
// it is never reached). An entry that is not an IP address ends the walk at the last proxy that
// was believed: after it, nobody trusted vouches for anything.
import { type Config } from '../config';
import { getConfig } from '../root';
import { AddressSet, canonicalAddress } from '../net/address-range';

export const PEER_HEADER = 'x-leasehold-peer';

const NOBODY = new AddressSet([]);

// Parsed once per config (a memo: a second copy of this module under Next parses it once more).
const parsed = new WeakMap<readonly string[], AddressSet>();

/** The proxies a config believes (default: this process's); nobody when the config cannot be read. */
export function trustedProxies(config?: Pick<Config, 'trustedProxies'>): AddressSet {
  try {
    const list = (config ?? getConfig()).trustedProxies;
    let proxies = parsed.get(list);
    if (!proxies) parsed.set(list, (proxies = new AddressSet(list)));
    return proxies;
  } catch {
    // Who is asking must still be answered (the sign-in limits need an address): by the socket.
    return NOBODY;
  }
}

/**
 * The client's address: the socket's, or, when the socket is a trusted proxy, the rightmost
 * X-Forwarded-For entry that is not one. Always an IP address in one form per address
 * (lib/net/address-range.ts canonicalAddress), or `unknown` when the socket's is not known (a
 * request that did not come through the stamping server: tests calling a handler directly).
 */
export function clientAddress(headers: Headers, proxies: AddressSet = trustedProxies()): string {
  const peer = canonicalAddress(headers.get(PEER_HEADER) ?? '');
  if (peer === null) return 'unknown';
  const forwarded = headers.get('x-forwarded-for');
  if (forwarded === null || !proxies.has(peer)) return peer;
  const hops = forwarded.split(',');
  let believed = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = canonicalAddress(hops[i]!);
    if (hop === null) return believed;
    if (!proxies.has(hop)) return hop;
    believed = hop;
  }
  return believed;
}
