// lib/lease and the PostgreSQL source on the embedded PGlite, through the pg-pool look-alike
// (lib/db/pglite-pool.ts), as the embedded demo runs them: the same semantics as on a real
// PostgreSQL server (the lease contract suite), and the source reads what the client wrote.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SOURCE } from '../../lib/root';
import { pglitePool } from '../../lib/db/pglite-pool';
import { createFencedStore, createLeaseClient } from '../../lib/lease';
import { createPostgresSource } from '../../lib/sources/postgres';
import { SourceUnavailableError } from '../../lib/sources/errors';
import { createSources } from '../../lib/sources/registry';

let db: PGlite;

beforeAll(async () => {
  db = await PGlite.create();
  await db.exec(`CREATE SCHEMA pixly; CREATE TABLE pixly.leases (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
});
afterAll(async () => {
  await db.close();
});

describe('the pg-pool look-alike over PGlite', () => {
  it('grants a lease once, renews and releases it, and the next grant has a higher token', async () => {
    const client = createLeaseClient({ backend: 'postgres', pool: pglitePool(db), table: 'pixly.leases', ensureTable: false });
    const first = (await client.acquire('scheduler', { holder: 'w1', ttlMs: 5_000 }))!;
    expect(first.token).toBe(1n);
    expect(await client.acquire('scheduler', { holder: 'w2', ttlMs: 5_000 })).toBeNull();
    const renewed = await client.renew(first);
    expect(renewed.token).toBe(1n);
    expect(await client.release(renewed)).toBe(true);
    const second = (await client.acquire('scheduler', { holder: 'w2', ttlMs: 5_000 }))!;
    expect(second.token).toBeGreaterThan(first.token);
    await client.release(second);
    await client.close();
    // close() leaves the PGlite it was given open.
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('an expired lease (by the database clock) goes to the next taker, with a higher token', async () => {
    const a = createLeaseClient({ backend: 'postgres', pool: pglitePool(db), table: 'pixly.leases', ensureTable: false });
    const b = createLeaseClient({ backend: 'postgres', pool: pglitePool(db), table: 'pixly.leases', ensureTable: false });
    const held = (await a.acquire('short', { holder: 'paused', ttlMs: 300 }))!;
    expect(await b.acquire('short', { holder: 'next', ttlMs: 5_000 })).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const taken = (await b.acquire('short', { holder: 'next', ttlMs: 5_000 }))!;
    expect(taken.token).toBeGreaterThan(held.token);
    await expect(a.renew(held)).rejects.toThrow();
  });

  it('the PostgreSQL source reads the table the clients write, as the demo source', async () => {
    const client = createLeaseClient({ backend: 'postgres', pool: pglitePool(db), table: 'pixly.leases', ensureTable: false });
    const lease = (await client.acquire('observed', { holder: 'server-07', ttlMs: 10_000 }))!;
    const source = createPostgresSource(DEMO_SOURCE, 1_000, pglitePool(db));
    const snapshot = await source.snapshot(new AbortController().signal);
    const seen = snapshot.observations.find((o) => o.key === 'pixly.leases/observed')!;
    expect(seen).toMatchObject({ holder: lease.holder, token: lease.token, released: false });
    expect(seen.remainingMs).toBeGreaterThan(8_000);
    // A poll reads what changed since (lib/sources/postgres/delta.ts), on PGlite as on a server.
    await client.release(lease);
    const next = (await client.acquire('observed', { holder: 'server-08', ttlMs: 10_000 }))!;
    const polled = await source.poll!(new AbortController().signal);
    expect(polled).toMatchObject({ kind: 'partial', unchangedUnder: ['pixly.leases/'] });
    expect(polled.kind === 'partial' && polled.covered).toContain('pixly.leases/observed');
    expect(polled.observations.find((o) => o.key === 'pixly.leases/observed')).toMatchObject({ holder: next.holder, token: next.token });
    await source.close();
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('the registry builds the demo source as any configured source, reading the embedded store it is given, and down where none is open', async () => {
    const client = createLeaseClient({ backend: 'postgres', pool: pglitePool(db), table: 'pixly.leases', ensureTable: false });
    const lease = (await client.acquire('registered', { holder: 'server-03', ttlMs: 10_000 }))!;
    const [source] = createSources({ sources: [DEMO_SOURCE], pollMs: 5_000 }, pglitePool(db));
    expect(source).toMatchObject({ name: 'demo', backend: 'postgres', pollMs: 1_000 });
    const snapshot = await source!.snapshot(new AbortController().signal);
    expect(snapshot.observations.find((o) => o.key === 'pixly.leases/registered')).toMatchObject({ holder: lease.holder, token: lease.token });
    await source!.close();
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await client.release(lease);
    await client.close();

    const [nowhere] = createSources({ sources: [DEMO_SOURCE], pollMs: 5_000 });
    const failure = await nowhere!.snapshot(new AbortController().signal).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceUnavailableError);
    expect((failure as SourceUnavailableError).reason).toMatch(/the embedded store is not open in this process/);
    await nowhere!.close();
  });

  it('the fenced store turns away a write with an older token', async () => {
    const fenced = createFencedStore({ pool: pglitePool(db), table: 'pixly.fence' });
    expect(await fenced.write('weekly-digest', 2n, 'week 1: enqueue')).toBe('accepted');
    expect(await fenced.write('weekly-digest', 1n, 'late write of a paused scheduler')).toBe('rejected');
    expect(await fenced.write('weekly-digest', 3n, 'week 1: watch')).toBe('accepted');
    expect((await fenced.log('weekly-digest')).map((w) => w.token)).toEqual([2n, 3n]);
    await fenced.close();
  });

  it('several statements without parameters in one text, as pg allows', async () => {
    const pool = pglitePool(db);
    const result = await pool.query<{ n: number }>('CREATE TEMP TABLE t (n int); INSERT INTO t VALUES (1), (2); SELECT count(*)::int AS n FROM t');
    expect(result.rows).toEqual([{ n: 2 }]);
    await pool.end();
    await expect(pool.query('SELECT 1')).rejects.toThrow('ended');
  });
});
