// The address a request came from. Route handlers get a fetch Request, without the socket;
// lib/api/unrepresentable-methods.ts, in front of Next, stamps each request with its socket's
// address under PEER_HEADER (overwriting whatever a client sent under that name).
//
// Behind a proxy every request comes from the proxy: the client is the last entry of
// X-Forwarded-For, the one the proxy saw. That header is believed only from a peer on this
// machine or a private network (127.0.0.0/8, ::1, 10/8, 172.16/12, 192.168/16, fc00::/7,
// link-local): where a reverse proxy runs. From any other address it is the client's own
// words, and the socket's address is the client's.
import { BlockList, isIP } from 'node:net';

export const PEER_HEADER = 'x-leasehold-peer';

const proxies = new BlockList();
proxies.addSubnet('127.0.0.0', 8, 'ipv4');
proxies.addSubnet('10.0.0.0', 8, 'ipv4');
proxies.addSubnet('172.16.0.0', 12, 'ipv4');
proxies.addSubnet('192.168.0.0', 16, 'ipv4');
proxies.addSubnet('169.254.0.0', 16, 'ipv4');
proxies.addAddress('::1', 'ipv6');
proxies.addSubnet('fc00::', 7, 'ipv6');
proxies.addSubnet('fe80::', 10, 'ipv6');

const normal = (address: string) => address.trim().toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');

/** Whether a request from `address` may speak for its client through X-Forwarded-For. */
export function mayForward(address: string): boolean {
  const ip = normal(address);
  const family = isIP(ip);
  return family !== 0 && proxies.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The client's address: the socket's, or, from a proxy on this machine or a private network,
 * the last entry of X-Forwarded-For. `unknown` when neither is known (a request that did not
 * come through the stamping server: tests calling a handler directly).
 */
export function clientAddress(headers: Headers): string {
  const peer = normal(headers.get(PEER_HEADER) ?? '');
  const forwarded = normal((headers.get('x-forwarded-for') ?? '').split(',').pop() ?? '');
  if (peer && !mayForward(peer)) return peer;
  return forwarded || peer || 'unknown';
}
