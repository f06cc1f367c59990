// What the server tells its operator at start about who can read it: anonymous reading on an
// address other machines reach means anyone who reaches the port reads every lease.
import type { Config } from '../config';

const LOOPBACK = /^(?:127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i;

/** The warning for a config that lets anyone who reaches the server read it, or null. */
export function exposureWarning(config: Pick<Config, 'host' | 'port' | 'auth'>): string | null {
  if (config.auth.anonymousRole !== 'viewer' || LOOPBACK.test(config.host)) return null;
  const where = config.host === '0.0.0.0' || config.host === '::' || config.host === '[::]' ? 'every address of this machine' : config.host;
  return (
    `anonymous reading is on (auth.anonymousRole "viewer") and the server listens on ${where} (HOST=${config.host}): ` +
    `anyone who can reach port ${config.port} reads every lease, holder, fencing token, failover and source without signing in. ` +
    'Listen on 127.0.0.1, or set LEASEHOLD_ANONYMOUS_ROLE=none and sign in (docs/security.md, "Anonymous access").'
  );
}
