// Builds the configured sources. The only place that knows every backend's adapter.
import { namesEmbeddedStore, type Config, type SourceConfig } from '../config';
import type { PgPoolLike } from '../db/pg-like';
import { scrub, scrubDeep, secretsOf } from '../redact';
import { createEtcdSource } from './etcd';
import { scrubSourceError } from './errors';
import { createPostgresSource } from './postgres';
import { createRedisSource } from './redis';
import type { Observation } from '../domain/observe';
import type { ChangeHint, LeaseSource } from './types';

/**
 * `embedded`: the embedded store's database (lib/db/pglite-pool.ts over the store's open
 * PGlite), for a PostgreSQL source whose url names it (`pglite://embedded`, lib/config/schema.ts);
 * null or absent where this process has no embedded store open (a PostgreSQL store, or
 * `leasehold snapshot`), and such a source is then down, saying so.
 */
export function createSource(config: SourceConfig, defaultPollMs: number, embedded?: PgPoolLike | null): LeaseSource {
  switch (config.backend) {
    case 'postgres':
      return withoutSecrets(createPostgresSource(config, defaultPollMs, namesEmbeddedStore(config.url) ? (embedded ?? noEmbeddedStore) : undefined), config);
    case 'redis':
      return withoutSecrets(createRedisSource(config, defaultPollMs), config);
    case 'etcd':
      return withoutSecrets(createEtcdSource(config, defaultPollMs), config);
  }
}

/** Every configured source; `embedded` as for createSource. */
export function createSources(config: Pick<Config, 'sources' | 'pollMs'>, embedded?: PgPoolLike | null): LeaseSource[] {
  return config.sources.map((source) => createSource(source, config.pollMs, embedded));
}

const NO_EMBEDDED_STORE = 'the embedded store is not open in this process (pglite://embedded is read only by a collector on the embedded store)';
/** The pool of a source that names the embedded store where none is open: every connection is refused. */
const noEmbeddedStore: PgPoolLike = {
  query: () => Promise.reject(new Error(NO_EMBEDDED_STORE)),
  connect: () => Promise.reject(new Error(NO_EMBEDDED_STORE)),
  end: async () => {},
  on: () => undefined,
};

/**
 * The source, with everything it says that may quote a credential scrubbed of its config's
 * secrets (lib/redact.ts secretsOf: URL passwords in every form, etcd's username and
 * password): the errors any of its methods throws or rejects with (message and reason; the
 * cause, which a log would print with the driver's options, is dropped), the problems of its
 * observations, its status detail, its unread parts' reasons and its change hints' reasons.
 * A driver or gRPC error that quotes a password without it being a URL is then safe.
 * A proxy, so a method the contract gains later is covered too.
 */
function withoutSecrets(source: LeaseSource, config: SourceConfig): LeaseSource {
  const secrets = secretsOf(config);
  const fail = (error: unknown): never => {
    throw scrubSourceError(error, secrets);
  };
  const clean = (result: unknown): unknown => {
    if (result === null || typeof result !== 'object' || Array.isArray(result)) return result;
    const fields = result as Record<string, unknown>;
    const cleaned: Record<string, unknown> = { ...fields };
    if (Array.isArray(fields.observations)) {
      cleaned.observations = (fields.observations as Observation[]).map((o) => (o.problem ? { ...o, problem: scrub(o.problem, secrets) } : o));
    }
    for (const key of ['status', 'unread']) if (key in fields) cleaned[key] = scrubDeep(fields[key], secrets);
    return cleaned;
  };
  const cleanHint = (onHint: (hint: ChangeHint) => void) => (hint: ChangeHint) =>
    onHint(hint?.reason ? { ...hint, reason: scrub(hint.reason, secrets) } : hint);
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(source, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      if (!methods.has(key)) {
        methods.set(key, (...args: unknown[]) => {
          if (key === 'watch' && typeof args[0] === 'function') args[0] = cleanHint(args[0] as (hint: ChangeHint) => void);
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (error) {
            return fail(error);
          }
          return result instanceof Promise ? result.then(clean, fail) : result;
        });
      }
      return methods.get(key);
    },
  });
}
