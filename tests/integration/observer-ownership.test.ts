// Every write of an observer is fenced by its ownership token of the source, including a batch
// of renewal rollups alone (renewals are written in pieces of at most 4,000 rows, and the last
// piece is often rollups only): a collector that lost the source writes nothing more of it.
// And a renewal batch writes only the columns a renewal moves, on both stores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

const stores: [string, () => Store][] = [
  ['PostgreSQL', () => store],
  ['the embedded PGlite', () => embedded],
];
let embedded: Store;
let embeddedDir: string;
beforeAll(async () => {
  embeddedDir = mkdtempSync(path.join(tmpdir(), 'lh-renewed-'));
  embedded = await openStore({ kind: 'pglite', dataDir: embeddedDir });
});
afterAll(async () => {
  await embedded?.close();
  if (embeddedDir) rmSync(embeddedDir, { recursive: true, force: true });
});

describe.each(stores)('a renewal batch writes only what renewals move (%s)', (_name, storeOf) => {
  const owner = { collectorId: 'renewer', token: 1n, ringSize: 8, source: { name: 'renewed' } };
  const source = { ...row, name: 'renewed' };
  const at = Date.parse('2026-12-07T12:00:00Z');
  const lease = (key: string, over: Partial<ReturnType<typeof newTrackedLease>> = {}) => ({
    ...newTrackedLease({ source: 'renewed', backend: 'redis', startedMono: 0, startedWall: at }, 'lock', key),
    state: 'held' as const,
    holder: 'worker-1',
    token: 7n,
    detail: { layout: 'single key' },
    ...over,
  });
  const stored = async (id: string) =>
    (await storeOf().withSql((sql) => sql.query<Record<string, unknown>>(`SELECT holder, token::text, detail, version::text, "renewalSeq"::text, "expiresAt", "lastMarginMs"::int AS "lastMarginMs" FROM "Lease" WHERE id = $1`, [id])))[0];

  it('moves the expiry, sequence and version of a row and leaves its other columns; newer news and missing rows are kept and written whole', async () => {
    const first = lease('a', { version: 1, expiresAtWall: at + 10_000 });
    const newer = lease('b', { version: 5, expiresAtWall: at + 50_000 });
    await writeBatch(storeOf(), { ...emptyBatch(owner, source), dirty: [first, newer] });

    // The renewal batch's pictures: a renewal of a, an older picture of b, a lease with no row yet.
    const renewedA = { ...first, version: 2, renewalSeq: 1, expiresAtWall: at + 20_000, lastRenewal: { intervalMs: 10_000, marginMs: 9_000 }, holder: 'not written' };
    const olderB = { ...newer, version: 4, expiresAtWall: at + 1_000 };
    const fresh = lease('c', { version: 1, renewalSeq: 1, expiresAtWall: at + 30_000 });
    await writeBatch(storeOf(), { ...emptyBatch(owner, null), dirty: [renewedA, olderB, fresh], renewedOnly: true });

    // a: the renewal's columns moved, the others as the last whole write left them (the holder
    // set above is one no renewal can carry: renewedOnly says so, and it is not written).
    expect(await stored(first.id)).toMatchObject({ holder: 'worker-1', token: '7', detail: { layout: 'single key' }, version: '2', renewalSeq: '1', expiresAt: new Date(at + 20_000), lastMarginMs: 9_000 });
    expect((await stored(newer.id))!.version).toBe('5');
    expect((await stored(newer.id))!.expiresAt).toEqual(new Date(at + 50_000));
    expect(await stored(fresh.id)).toMatchObject({ holder: 'worker-1', token: '7', version: '1', expiresAt: new Date(at + 30_000) });
  });

  it('the renewed tables leave room on each page for a row\'s next version (migration 20261209000000_renewal_room)', async () => {
    const options = await storeOf().withSql((sql) => sql.query<{ relname: string; reloptions: string[] | null }>(`SELECT relname, reloptions FROM pg_class WHERE relname IN ('Lease', 'RenewalSample') ORDER BY relname`));
    expect(options).toEqual([
      { relname: 'Lease', reloptions: ['fillfactor=70'] },
      { relname: 'RenewalSample', reloptions: ['fillfactor=70'] },
    ]);
  });
});
