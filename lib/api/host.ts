// Which Host a request may name, and which requests may change state (DNS rebinding and CSRF).
//
// Host: a page on evil.example whose name is made to resolve to 127.0.0.1 (DNS rebinding)
// is, to the browser, same-origin with whatever listens there, and may read its answers; its
// requests still say `Host: evil.example`. So a request is served only when its Host is one
// of the names this server is reached by: LEASEHOLD_ALLOWED_HOSTS, or by default the loopback
// names and addresses, the address it listens on and, listening on every address (0.0.0.0,
// ::), the machine's name and its interfaces' addresses.
//
// Origin: a state-changing request (any method but GET, HEAD, OPTIONS) from a browser must
// come from a page of this server: its Origin names the same host and port as its Host, or,
// without an Origin, its Sec-Fetch-Site says same-origin or none. A request with neither
// header is not a browser's (curl, the CLI, scripts): every browser sends Origin on a
// cross-origin POST, so it is not a cross-site request and is served.
import os from 'node:os';
import { parseHostPattern, type HostPattern } from '../net/host-pattern';
import { quoted, RequestRefusedError } from './refusal';

export { parseAllowedHosts, parseHostPattern, type HostPattern } from '../net/host-pattern';

export type HostRule = { any: true } | { any: false; patterns: HostPattern[]; wildcardBind: boolean };

const LOOPBACK: HostPattern[] = [
  { host: 'localhost', port: null },
  { host: '127.0.0.1', port: null },
  { host: '::1', port: null },
];

function isWildcard(bind: string): boolean {
  const host = bind.replace(/^\[|\]$/g, '');
  return host === '0.0.0.0' || host === '::' || host === '0:0:0:0:0:0:0:0';
}

/** The rule for a server listening on `bind` with LEASEHOLD_ALLOWED_HOSTS `allowed` (null: the default). */
export function hostRule(bind: string, allowed: string[] | null): HostRule {
  if (allowed !== null) {
    if (allowed.includes('*')) return { any: true };
    return { any: false, patterns: allowed.map((entry) => parseHostPattern(entry)).filter((p): p is HostPattern => p !== null), wildcardBind: false };
  }
  const patterns = [...LOOPBACK];
  const wildcardBind = isWildcard(bind);
  if (!wildcardBind) {
    const own = parseHostPattern(bind);
    if (own) patterns.push({ host: own.host, port: null });
  }
  return { any: false, patterns, wildcardBind };
}

/** The machine's name and its interfaces' addresses: what a server listening on every address is reached by. */
export function machineHosts(): HostPattern[] {
  const hosts: HostPattern[] = [{ host: os.hostname().toLowerCase().replace(/\.$/, ''), port: null }];
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const address of addresses ?? []) hosts.push({ host: address.address.toLowerCase().replace(/%.*$/, ''), port: null });
  }
  return hosts;
}

const matches = (patterns: HostPattern[], asked: HostPattern) => patterns.some((p) => p.host === asked.host && (p.port === null || p.port === asked.port));

/** Whether a Host header value is allowed by the rule. */
export function hostAllowed(rule: HostRule, header: string | null): boolean {
  if (rule.any) return true;
  if (header === null) return false;
  const asked = parseHostPattern(header);
  if (!asked) return false;
  if (matches(rule.patterns, asked)) return true;
  // Read the interfaces when needed, not once: an address may come (DHCP, a container's network) after start.
  return rule.wildcardBind && matches(machineHosts(), asked);
}

/** Paths an orchestrator's health checks use: answered whatever the Host (they show no lease and no secret). */
export function isHealthPath(pathname: string): boolean {
  return pathname === '/api/health' || pathname === '/api/health/live';
}

export function checkHost(rule: HostRule, headers: Headers, pathname: string, method: string): void {
  if ((method === 'GET' || method === 'HEAD') && isHealthPath(pathname)) return;
  const host = headers.get('host');
  if (hostAllowed(rule, host)) return;
  throw new RequestRefusedError(
    421,
    'host_not_allowed',
    `This server does not answer for the host ${host === null ? '(none: the request has no Host header)' : quoted(host)}. ` +
      'It answers only for the names it is reached by, so that another site cannot read it through DNS rebinding. ' +
      'To allow this name, start it with LEASEHOLD_ALLOWED_HOSTS listing every name and address it is reached by ' +
      '(comma-separated, host or host:port; * allows any); the default is localhost, 127.0.0.1, [::1] and the address in HOST.',
  );
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method);
}

function defaultPort(protocol: string): number | null {
  return protocol === 'http:' ? 80 : protocol === 'https:' ? 443 : null;
}

/** A state-changing request must come from this server's own pages, or from something that is not a browser. */
export function checkOrigin(headers: Headers, method: string): void {
  if (!isStateChanging(method)) return;
  const origin = headers.get('origin');
  if (origin === null) {
    const site = headers.get('sec-fetch-site');
    if (site === null || site === 'same-origin' || site === 'none') return;
    throw crossOrigin(method, `a page of another site (Sec-Fetch-Site: ${quoted(site)})`);
  }
  const host = parseHostPattern(headers.get('host') ?? '');
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    // not a URL ("null" from a sandboxed page or a file://): not this server
  }
  if (url && host && (url.protocol === 'http:' || url.protocol === 'https:')) {
    const originHost = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const originPort = url.port === '' ? defaultPort(url.protocol) : Number(url.port);
    if (originHost === host.host && originPort === (host.port ?? defaultPort(url.protocol))) return;
  }
  throw crossOrigin(method, `the origin ${quoted(origin)}`);
}

function crossOrigin(method: string, from: string): RequestRefusedError {
  return new RequestRefusedError(
    403,
    'cross_origin',
    `A ${method} from ${from} is refused: requests that change state must come from this server's own pages ` +
      '(the same origin), or from a client that is not a browser (curl and the CLI send no Origin header).',
  );
}
