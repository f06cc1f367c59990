// Every write of an observer is fenced by its ownership token of the source, including a batch
// of renewal rollups alone (renewals are written in pieces of at most 4,000 rows, and the last
// piece is often rollups only): a collector that lost the source writes nothing more of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StaleOwnerError } from '../../lib/db/observer-batch';
import { writeBatch } from '../../lib/db/observer-writes';
import { openStore, type Store } from '../../lib/db/store';
import { emptyBatch } from '../../lib/collector/write-queue';
import { newTrackedLease } from '../../lib/domain/tracked-lease';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';

let db: TestDatabase & { url: string };
let store: Store;
beforeAll(async () => {
  db = await createPostgresDatabase('lh_ownership');
  store = await openStore({ kind: 'postgres', url: db.url });
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const row = { name: 'owned', backend: 'redis' as const, status: 'up' as const, lastGoodReadAt: null, lastError: null, lastPollMs: null, pollMs: 1_000, detail: null };
const stats = { count: 1, intervalMin: 10, intervalP50: 10, intervalP99: 10, intervalMax: 10, marginMin: 5, marginP50: 5, marginP99: 5, marginMax: 5 };

describe('ownership of a source', () => {
  it('refuses a batch of rollups alone from a collector whose token is not the source row\'s', async () => {
    const owner = { collectorId: 'new', token: 2n, ringSize: 8, source: { name: 'owned' } };
    const former = { ...owner, collectorId: 'old', token: 1n };
    const lease = { ...newTrackedLease({ source: 'owned', backend: 'redis', startedMono: 0, startedWall: Date.now() }, 'lock', 'k'), version: 1 };
    await writeBatch(store, { ...emptyBatch(owner, row), dirty: [lease] });
    const rollupsOnly = (writer: typeof owner) => ({ ...emptyBatch(writer, null), rollups: [{ leaseId: lease.id, minute: Math.floor(Date.now() / 60_000) * 60_000, stats }] });
    await expect(writeBatch(store, rollupsOnly(former))).rejects.toBeInstanceOf(StaleOwnerError);
    // The owner's own is fenced the same way, and passes.
    await expect(writeBatch(store, rollupsOnly(owner))).resolves.toBeDefined();
  });
});
