import 'server-only';
import type { Store } from '../db';
import type { StoreHealth } from '../domain/schemas/responses';

/** GET /api/health's answer: lib/domain/schemas/responses.ts. */
export type { StoreHealth };

export async function storeHealth(store: Store): Promise<StoreHealth> {
  const status = await store.migrationStatus();
  // A store a newer release migrated: this process was started before that (a start now is
  // refused, lib/db/migrate.ts) and nothing promises it works on the newer schema.
  const state = status.failed.length > 0 ? 'failed' : status.unknown.length > 0 ? 'ahead' : status.pending.length > 0 ? 'pending' : 'up_to_date';
  return {
    status: state === 'up_to_date' ? 'ok' : 'not_ready',
    store: { kind: store.kind },
    migrations: {
      state,
      applied: status.applied.length,
      total: status.known.length,
      latest: status.applied.at(-1) ?? null,
      pending: status.pending,
      failed: status.failed,
      ahead: status.unknown,
    },
    uptimeMs: Math.round(process.uptime() * 1000),
  };
}
