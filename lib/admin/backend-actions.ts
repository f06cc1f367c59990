// One ForceActions (lib/sources/force.ts) per configured source, made when first needed and
// kept by the composition root (lib/root): an admin action at 3 a.m. does not wait for a new
// connection pool. Closed when the root closes.
import { type SourceConfig } from '../config';
import { part, type Parts } from '../parts';
import type { Store } from '../db/store';
import { pglitePool } from '../db/pglite-pool';
import { forceActionsFor } from '../sources/force-registry';
import type { ForceActions } from '../sources/force';
import { NotPossibleError } from './force-request';

const FORCE_ACTIONS = part(
  'force actions per source',
  () => new Map<string, { config: string; actions: ForceActions }>(),
  async (cache) => {
    const all = [...cache.values()];
    cache.clear();
    await Promise.allSettled(all.map(({ actions }) => actions.close()));
  },
);

/** The force actions of `sourceName`, one of `sources` (the configured ones), kept in `root`. */
export function forceActionsOf(root: Parts, store: Store, sourceName: string, sources: readonly SourceConfig[]): ForceActions {
  const source = sources.find((candidate) => candidate.name === sourceName);
  if (!source) throw new NotPossibleError('source_not_configured', `The source "${sourceName}" is not in this server's config any more: nothing can be done to its leases from here.`);
  const cache = root.part(FORCE_ACTIONS);
  const key = JSON.stringify(source);
  const cached = cache.get(sourceName);
  if (cached && cached.config === key) return cached.actions;
  if (cached) void cached.actions.close().catch(() => {});
  const actions = forceActionsFor(source, store.pglite ? pglitePool(store.pglite) : null);
  cache.set(sourceName, { config: key, actions });
  return actions;
}
