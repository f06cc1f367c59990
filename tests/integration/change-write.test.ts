// A batch of state changes is written as one statement (lib/db/change-write.ts), on both
// stores: a new lease and its first event together, a retry that adds nothing, the version
// guard, the fencing by the source's ownership token (with the source's row and without), and
// on PostgreSQL the notice other processes hear, with the ids of the events it wrote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isChangeOnly } from '../../lib/db/change-write';
import { parseChangeNotice, type ChangeNotice } from '../../lib/db/change-notices';
import { StaleOwnerError, type WriteBatch } from '../../lib/db/observer-batch';
import { writeBatch } from '../../lib/db/observer-writes';
import { openStore, type Store } from '../../lib/db/store';
import { emptyBatch } from '../../lib/collector/write-queue';
import { newTrackedLease, type TrackedLease } from '../../lib/domain/tracked-lease';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';

let db: TestDatabase & { url: string };
let postgres: Store;
let embedded: Store;
let embeddedDir: string;
beforeAll(async () => {
  db = await createPostgresDatabase('lh_changewrite');
  postgres = await openStore({ kind: 'postgres', url: db.url });
  embeddedDir = mkdtempSync(path.join(tmpdir(), 'lh-changewrite-'));
  embedded = await openStore({ kind: 'pglite', dataDir: embeddedDir });
});
afterAll(async () => {
  await postgres?.close();
  await db?.drop();
  await embedded?.close();
  if (embeddedDir) rmSync(embeddedDir, { recursive: true, force: true });
});

const at = Date.parse('2026-12-07T12:00:00Z');
const sourceRow = (name: string) => ({ name, backend: 'redis' as const, status: 'up' as const, lastGoodReadAt: null, lastError: null, lastPollMs: null, pollMs: 1_000, detail: null });
const leaseOf = (source: string, key: string, over: Partial<TrackedLease> = {}): TrackedLease => ({
  ...newTrackedLease({ source, backend: 'redis', startedMono: 0, startedWall: at }, 'lock', key),
  state: 'held',
  holder: 'worker-1',
  token: 7n,
  version: 1,
  ...over,
});
const acquired = (lease: TrackedLease, seq: number): WriteBatch['events'][number] => ({
  lease,
  seq,
  change: { type: 'acquired', atWall: at + seq, holder: lease.holder, previousHolder: null, token: lease.token, previousToken: null, gapMs: null, detail: { note: 'a \'quoted\' $1 detail' } },
});

describe.each([
  ['PostgreSQL', () => postgres],
  ['the embedded PGlite', () => embedded],
] as const)('state changes in one statement (%s)', (_name, storeOf) => {
  const rows = async (sql: string, params: unknown[]) => storeOf().withSql((s) => s.query<Record<string, unknown>>(sql, params));

  it('writes a new lease with its first event, returns the event, and a retry adds nothing', async () => {
    const owner = { collectorId: 'c1', token: 3n, ringSize: 8, source: { name: 'one-statement' } };
    const lease = leaseOf('one-statement', 'orders/1');
    const batch = { ...emptyBatch(owner, sourceRow('one-statement')), dirty: [lease], events: [acquired(lease, 1)] };
    expect(isChangeOnly(batch)).toBe(true);
    const written = await writeBatch(storeOf(), batch);
    expect(written).toEqual([{ id: expect.stringMatching(/^[1-9]\d*$/), leaseId: lease.id, seq: 1 }]);
    expect(await rows(`SELECT holder, token::text AS token, version::text AS version FROM "Lease" WHERE id = $1`, [lease.id])).toEqual([{ holder: 'worker-1', token: '7', version: '1' }]);
    expect(await rows(`SELECT id::text AS id, detail FROM "LeaseEvent" WHERE "leaseId" = $1`, [lease.id])).toEqual([{ id: written[0]!.id, detail: { note: 'a \'quoted\' $1 detail' } }]);
    // Retried (a lost answer): the same event is not inserted twice, and nothing is returned for it.
    expect(await writeBatch(storeOf(), batch)).toEqual([]);
    expect(await rows(`SELECT count(*)::int AS n FROM "LeaseEvent" WHERE "leaseId" = $1`, [lease.id])).toEqual([{ n: 1 }]);
    // Without the source's row (its ownership checked instead), and an older picture kept out.
    const moved = { ...lease, holder: 'worker-2', token: 8n, version: 3 };
    await writeBatch(storeOf(), { ...emptyBatch(owner, null), dirty: [moved], events: [acquired(moved, 2)] });
    await writeBatch(storeOf(), { ...emptyBatch(owner, null), dirty: [{ ...lease, holder: 'older news', version: 2 }] });
    expect(await rows(`SELECT holder FROM "Lease" WHERE id = $1`, [lease.id])).toEqual([{ holder: 'worker-2' }]);
  });

  it('writes nothing for a collector whose token is older than the source row\'s, with the source\'s row or without', async () => {
    const owner = { collectorId: 'new', token: 5n, ringSize: 8, source: { name: 'fenced' } };
    const former = { ...owner, collectorId: 'old', token: 4n };
    await writeBatch(storeOf(), emptyBatch(owner, sourceRow('fenced')));
    for (const withRow of [true, false]) {
      const lease = leaseOf('fenced', `stale-${withRow}`, { holder: 'from a paused collector' });
      const batch = { ...emptyBatch(former, withRow ? sourceRow('fenced') : null), dirty: [lease], events: [acquired(lease, 1)] };
      await expect(writeBatch(storeOf(), batch)).rejects.toBeInstanceOf(StaleOwnerError);
      expect(await rows(`SELECT id FROM "Lease" WHERE id = $1`, [lease.id])).toEqual([]);
      expect(await rows(`SELECT id FROM "LeaseEvent" WHERE "leaseId" = $1`, [lease.id])).toEqual([]);
    }
    expect(await rows(`SELECT "collectorId" FROM "Source" WHERE name = 'fenced'`, [])).toEqual([{ collectorId: 'new' }]);
  });
});

describe('the notice of a one-statement write (PostgreSQL)', () => {
  it('is heard once it commits, naming the leases and the events it wrote, and not for a write that changed no lease', async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const heard: ChangeNotice[] = [];
    listener.on('notification', (message) => {
      const notice = parseChangeNotice(message.payload);
      if (notice) heard.push(notice);
    });
    await listener.query('LISTEN leasehold_changes');
    try {
      const owner = { collectorId: 'notifier', token: 1n, ringSize: 8, source: { name: 'noticed' } };
      await writeBatch(postgres, emptyBatch(owner, sourceRow('noticed'))); // the source's row alone: no notice
      const lease = leaseOf('noticed', 'tenant/9');
      const [event] = await writeBatch(postgres, { ...emptyBatch(owner, null), dirty: [lease], events: [acquired(lease, 1)] });
      await expect.poll(() => heard.length).toBe(1);
      expect(heard[0]).toEqual({ collector: 'notifier', source: 'noticed', sourceRow: false, leases: [lease.id], events: [event!.id] });
    } finally {
      await listener.end();
    }
  });
});
