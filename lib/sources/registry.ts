// Builds the configured sources, each by its kind's descriptor (lib/sources/backends.ts).
import type { PgPoolLike } from '../db/pg-like';
import { scrub, scrubDeep, secretsOf } from '../redact';
import { logger, type Logger } from '../log';
import { systemClock, type Clock } from '../time/clock';
import type { BackendContext, BackendDescriptor } from './backend';
import { BACKEND_DESCRIPTORS, backendOf, type SourceConfig } from './backends';
import { scrubSourceError } from './errors';
import type { Observation } from '../domain/observe';
import type { ChangeHint, LeaseSource } from './types';

/**
 * A configured source, built by its kind's descriptor (lib/sources/backends.ts). `embedded`:
 * the embedded store's database (lib/db/pglite-pool.ts over the store's open PGlite), for a
 * PostgreSQL source whose url names it (`pglite://embedded`, lib/sources/postgres/config.ts); null or
 * absent where this process has no embedded store open (a PostgreSQL store, or `leasehold
 * snapshot`), and such a source is then down, saying so. `backends`: the registered kinds
 * unless a test hands its own.
 */
export function createSource(
  config: SourceConfig,
  defaultPollMs: number,
  embedded?: PgPoolLike | null,
  backends: readonly BackendDescriptor[] = BACKEND_DESCRIPTORS,
  given: SourceWiring = {},
): LeaseSource {
  // Each source gets the clock it reads (the system's unless one is handed in) and a logger of its own.
  const log = (given.log ?? logger('source')).child({ source: config.name });
  const context: BackendContext = { defaultPollMs, embedded, clock: given.clock ?? systemClock, log };
  return withoutSecrets(backendOf(config, backends).createSource(config, context), config);
}

/**
 * What a caller hands its sources: the clock they read (default: the system's) and the logger
 * each takes a child of, `source: <name>` (default: the process's, `area: source`).
 */
export type SourceWiring = { clock?: Clock; log?: Logger };

/** Every configured source; `embedded` as for createSource, `given` its clock and logger. */
export function createSources(config: { sources: readonly SourceConfig[]; pollMs: number }, embedded?: PgPoolLike | null, given: SourceWiring = {}): LeaseSource[] {
  return config.sources.map((source) => createSource(source, config.pollMs, embedded, BACKEND_DESCRIPTORS, given));
}

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
