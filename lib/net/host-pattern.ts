// Host patterns: the entries of LEASEHOLD_ALLOWED_HOSTS (`host`, `host:port`, `[v6]:port`, `*`),
// parsed without any I/O, for the config (lib/config/schema.ts) and the Host check (lib/api/host.ts).
import { isIP } from 'node:net';

/** One entry of LEASEHOLD_ALLOWED_HOSTS: a host (lower case, IPv6 without brackets) and a port, or any port. */
export type HostPattern = { host: string; port: number | null };

const NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\.?$/;

/** `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address; null when it is none of them. */
export function parseHostPattern(text: string): HostPattern | null {
  const value = text.trim().toLowerCase();
  if (value.length === 0 || value.length > 300) return null;
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/.exec(value);
  if (bracketed) {
    host = bracketed[1]!;
    portText = bracketed[2];
    if (isIP(host) !== 6) return null;
  } else if (isIP(value) === 6) {
    host = value;
  } else {
    const plain = /^([^:]+)(?::(\d{1,5}))?$/.exec(value);
    if (!plain) return null;
    host = plain[1]!;
    portText = plain[2];
    if (isIP(host) !== 4 && !NAME.test(host)) return null;
    host = host.replace(/\.$/, ''); // "localhost." is "localhost"
  }
  let port: number | null = null;
  if (portText !== undefined) {
    port = Number(portText);
    if (port < 1 || port > 65535) return null;
  }
  return { host, port };
}

/** LEASEHOLD_ALLOWED_HOSTS: comma-separated patterns, or `*`. Null when an entry is not valid. */
export function parseAllowedHosts(text: string): string[] | null {
  const entries = text
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return null;
  return entries.every((entry) => entry === '*' || parseHostPattern(entry) !== null) ? entries : null;
}
