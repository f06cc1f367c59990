// One ForceActions (lib/sources/force.ts) per configured source, made when first needed and
// kept for the process: an admin action at 3 a.m. does not wait for a new connection pool.
import { type SourceConfig } from '../config';
import { getConfig } from '../root';
import type { Store } from '../db/store';
import { pglitePool } from '../db/pglite-pool';
import { forceActionsFor } from '../sources/force-registry';
import type { ForceActions } from '../sources/force';
import { NotPossibleError } from './force-request';

const state = globalThis as typeof globalThis & { __leaseholdForceActions?: Map<string, { config: string; actions: ForceActions }> };

/** `sources`: the configured sources (this process's config unless given). */
export function forceActionsOf(store: Store, sourceName: string, sources: readonly SourceConfig[] = getConfig().sources): ForceActions {
  const source = sources.find((candidate) => candidate.name === sourceName);
  if (!source) throw new NotPossibleError('source_not_configured', `The source "${sourceName}" is not in this server's config any more: nothing can be done to its leases from here.`);
  const cache = (state.__leaseholdForceActions ??= new Map());
  const key = JSON.stringify(source);
  const cached = cache.get(sourceName);
  if (cached && cached.config === key) return cached.actions;
  if (cached) void cached.actions.close().catch(() => {});
  const actions = forceActionsFor(source, store.pglite ? pglitePool(store.pglite) : null);
  cache.set(sourceName, { config: key, actions });
  return actions;
}
