// The Host and Origin checks of lib/api/host.ts with this process's configuration: what
// proxy.ts runs before routing, and what a route that reads a body runs itself (proxy.ts does
// not see requests that carry a body to such a route: see there).
import { DEFAULT_HOST } from '../config';
import { getConfig } from '../root';
import { checkHost, checkOrigin, hostRule, type HostRule } from './host';

/** This process's rule, from its config (LEASEHOLD_ALLOWED_HOSTS, HOST); from HOST alone when the config cannot be read. */
export function currentHostRule(): HostRule {
  try {
    const config = getConfig();
    return hostRule(config.host, config.allowedHosts);
  } catch {
    return hostRule(process.env.HOST?.trim() || DEFAULT_HOST, null);
  }
}

/** Throws RequestRefusedError (421 or 403) for a Host this server does not answer for, or a cross-origin state-changing request. */
export function guardRequest(request: Request, pathname = new URL(request.url).pathname): void {
  const method = request.method.toUpperCase();
  checkHost(currentHostRule(), request.headers, pathname, method);
  checkOrigin(request.headers, method);
}
