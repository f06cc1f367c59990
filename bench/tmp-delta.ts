import pg from 'pg';
import { createPostgresSource } from '../lib/sources/postgres';
import { createPostgresDatabase } from '../tests/support/databases';
const db = await createPostgresDatabase('lh_tmpdelta');
const sql = new pg.Client(db.url); await sql.connect();
await sql.query(`CREATE TABLE leases (name varchar(200) primary key, owner varchar(200), expires_at timestamptz not null, token bigint not null default 0)`);
await sql.query(`INSERT INTO leases SELECT 'k' || i, 'w', now() + interval '30 s', i FROM generate_series(1, 33333) i`);
const source = createPostgresSource({ name: 'pg', backend: 'postgres', url: db.url, tables: [{ table: 'leases', format: 'leasehold' }], advisoryLocks: false }, 1000);
let t = performance.now(); await source.snapshot(AbortSignal.timeout(10000)); console.log('snapshot', (performance.now() - t).toFixed(0));
for (let round = 0; round < 5; round++) {
  await sql.query(`UPDATE leases SET expires_at = now() + interval '30 s' WHERE name IN (SELECT 'k' || (random() * 33333)::int FROM generate_series(1, 3300))`);
  t = performance.now(); const r = await source.poll!(AbortSignal.timeout(10000)); const d = performance.now() - t;
  t = performance.now(); await source.snapshot(AbortSignal.timeout(10000)); const f = performance.now() - t;
  console.log('poll', d.toFixed(0), 'full', f.toFixed(0), r.kind, (r as any).observations.length);
}
await source.close(); await sql.end(); await db.drop();
