// The guarded actions of a configured source, each backend's made by its kind's descriptor
// (lib/sources/backends.ts), as registry.ts makes its reads. Every request is checked here before a backend sees it,
// every call honours its signal, and every failure that is not a conflict or a refusal leaves
// as SourceUnavailableError scrubbed of the source's secrets, as its reads' failures do.
import type { PgPoolLike } from '../db/pg-like';
import { secretsOf } from '../redact';
import type { BackendForce } from './backend';
import { backendOf, type SourceConfig } from './backends';
import { scrubSourceError, SourceUnavailableError } from './errors';
import { checkRequest, ForceConflictError, ForceNotPossibleError, type ForceActions } from './force';

/**
 * Runs `work` until it settles or `signal` aborts. Aborted before anything was sent: nothing
 * was done. Aborted while it ran: the backend may or may not have applied it, and only a
 * new read of the lease can tell (the action itself was one compare-and-set: never half).
 */
async function until<T>(source: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  if (signal.aborted) throw new SourceUnavailableError(source, 'the action was cancelled before anything was sent');
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new SourceUnavailableError(source, 'the action was cancelled while it ran: it may or may not have been applied; read the lease again'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work(), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The guarded actions of one source (lib/sources/force.ts). `embedded`: the embedded store's
 * pool, for a PostgreSQL source whose url names it (as for createSource). Connections are
 * opened on first use where the driver allows it; close() ends them.
 */
export function forceActionsFor(config: SourceConfig, embedded?: PgPoolLike | null): ForceActions {
  const secrets = secretsOf(config);
  let backend: BackendForce | undefined;
  const clean = (error: unknown): never => {
    if (error instanceof ForceConflictError || error instanceof ForceNotPossibleError) throw error;
    throw scrubSourceError(error, secrets);
  };
  const call = async <T>(signal: AbortSignal, work: (b: BackendForce) => Promise<T>): Promise<T> => {
    try {
      backend ??= backendOf(config).createForce(config, { embedded });
      return await until(config.name, signal, () => work(backend!));
    } catch (error) {
      return clean(error);
    }
  };
  return {
    async plan(request, signal = AbortSignal.timeout(10_000)) {
      const checked = checkRequest(request);
      return call(signal, (b) => b.plan(checked, signal));
    },
    async execute(request, signal) {
      const checked = checkRequest(request);
      return call(signal, (b) => b.execute(checked, signal));
    },
    async close() {
      await backend?.close();
      backend = undefined;
    },
  };
}
