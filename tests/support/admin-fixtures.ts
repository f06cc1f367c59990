// Fixtures for tests/integration/admin-actions.test.ts: the guarded actions of lib/admin end to
// end, on the real servers. One world per test file: a PostgreSQL database holding the source's
// tables (Leasehold's lease table and a ShedLock table), a Redis key prefix and an etcd key
// prefix of its own, and the source configs a collector reads and lib/admin is given
// (ForceContext.sources). Holders are made with lib/lease (fenced) or as ShedLock and plain
// SET NX PX locks write them (unfenced); every lease is observed by a collector into the store
// before it is forced, as lib/admin reads the lease from the store.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import { expect } from 'vitest';
import type { Principal } from '../../lib/auth/principal';
import { forceBody, type ForceBody } from '../../lib/admin/force-request';
import type { SourceConfig } from '../../lib/config';
import type { PersonRole } from '../../lib/config/auth-schema';
import { listAudit, type AuditRow } from '../../lib/db/audit';
import { readLeaseView } from '../../lib/db/leases';
import type { Store } from '../../lib/db/store';
import { createLeaseClient, type Lease, type LeaseClient } from '../../lib/lease';
import { createParts, type Parts } from '../../lib/parts';
import { createPostgresDatabase, type TestDatabase } from './databases';
import { testServices } from './services';

export const uid = () => randomBytes(4).toString('hex');
export const REASON = 'worker wedged in a GC pause (integration test)';
/** Where nothing listens: connecting is refused at once. */
export const CLOSED_PORT_URL = 'redis://127.0.0.1:1';

const ADDRESS = '203.0.113.9';
/** A principal as lib/auth/principal.ts makes one (signed in by password, or by API token). */
export function principal(role: PersonRole, method: Principal['method'] = 'password'): Principal {
  const name = { viewer: 'vera', operator: 'olga', admin: 'adam' }[role];
  return { name, role, method, userId: method === 'password' ? `u-${name}` : null, tokenId: method === 'token' ? `t-${name}` : null, sessionId: null, address: ADDRESS };
}

/** A fenced layout, held through lib/lease. */
export type FencedLayout = {
  name: string;
  source: string;
  client(): LeaseClient;
  /** The key lib/lease takes, and the store's id of the lease the source reports. */
  keys(label: string): { leaseKey: string; leaseId: string };
};

export type AdminWorld = {
  /** What the collector reads, and what lib/admin is given. */
  sources: SourceConfig[];
  /** The same, with the "gone" source pointing at a closed port (the collector read it from the real Redis). */
  downSources: SourceConfig[];
  fenced: FencedLayout[];
  /** lib/lease on Redis, under the "gone" source. */
  gone: FencedLayout;
  sourceDbUrl: string;
  shedlockTable: string;
  redis: Redis;
  /** Keys of the Redis source (and their fence counters). */
  redisKey(label: string): string;
  /** What lib/admin keeps its connections to the sources in (a server's composition root does), closed with the world. */
  parts: Parts;
  close(): Promise<void>;
};

export async function createAdminWorld(): Promise<AdminWorld> {
  const services = testServices();
  const etcdEndpoint = services.etcdEndpoints[0]!;
  const run = `adm${uid()}`;
  const db: TestDatabase & { url: string } = await createPostgresDatabase('lh_admin_src');
  const leaseTable = `leases_${run}`;
  const shedlockTable = `shedlock_${run}`;
  const sql = new pg.Client(db.url);
  await sql.connect();
  await sql.query(`CREATE TABLE ${leaseTable} (name VARCHAR(200) PRIMARY KEY, owner VARCHAR(200), expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
  await sql.query(`CREATE TABLE ${shedlockTable} (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)`);
  await sql.end();

  const redisSource = (name: string, part: string, urls = [services.redisUrl]): SourceConfig => ({
    name,
    backend: 'redis',
    urls,
    match: [`${run}:${part}:*`],
    fenceSuffix: ':fence',
    keyspaceNotifications: 'off',
  });
  const sources: SourceConfig[] = [
    { name: 'pg', backend: 'postgres', url: db.url, tables: [{ table: leaseTable, format: 'leasehold' }, { table: shedlockTable, format: 'shedlock' }], advisoryLocks: false },
    redisSource('redis', 'lease'),
    { name: 'etcd', backend: 'etcd', endpoints: [etcdEndpoint], prefixes: [`${run}/`] },
    redisSource('gone', 'gone'),
  ];
  const downSources = sources.map((s) => (s.name === 'gone' ? redisSource('gone', 'gone', [CLOSED_PORT_URL]) : s));

  const clients: LeaseClient[] = [];
  const tracked = (client: LeaseClient) => (clients.push(client), client);
  const fenced: FencedLayout[] = [
    {
      name: 'postgres lease table',
      source: 'pg',
      client: () => tracked(createLeaseClient({ backend: 'postgres', url: db.url, table: leaseTable })),
      keys: (label) => ({ leaseKey: label, leaseId: `pg/${leaseTable}/${label}` }),
    },
    {
      name: 'redis with a fence counter',
      source: 'redis',
      client: () => tracked(createLeaseClient({ backend: 'redis', urls: [services.redisUrl] })),
      keys: (label) => ({ leaseKey: `${run}:lease:${label}`, leaseId: `redis/${run}:lease:${label}` }),
    },
    {
      name: 'etcd single key',
      source: 'etcd',
      client: () => tracked(createLeaseClient({ backend: 'etcd', endpoints: [etcdEndpoint] })),
      keys: (label) => ({ leaseKey: `${run}/lock/${label}`, leaseId: `etcd/${run}/lock/${label}` }),
    },
  ];
  const gone: FencedLayout = { ...fenced[1]!, name: 'redis, unreachable', source: 'gone', keys: (label) => ({ leaseKey: `${run}:gone:${label}`, leaseId: `gone/${run}:gone:${label}` }) };
  const redis = new Redis(services.redisUrl);
  const parts = createParts();

  return {
    sources,
    downSources,
    fenced,
    gone,
    sourceDbUrl: db.url,
    shedlockTable,
    redis,
    redisKey: (label) => `${run}:lease:${label}`,
    parts,
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await parts.stopAll();
      for await (const keys of redis.scanStream({ match: `${run}:*`, count: 1_000 })) if ((keys as string[]).length) await redis.del(...(keys as string[]));
      redis.disconnect();
      const etcd = new Etcd3({ hosts: [etcdEndpoint] });
      await etcd.delete().prefix(`${run}/`).catch(() => {});
      etcd.close();
      await db.drop();
    },
  };
}


/** Waits until the store's Lease row shows `holder` (and `token`) holding it: lib/admin reads the lease from there. */
export async function observed(store: Store, leaseId: string, holder: string, token: string | null) {
  await expect
    .poll(async () => {
      const view = await readLeaseView(store, leaseId, async () => 0);
      return view && { state: view.state, holder: view.holder, token: view.token };
    }, { timeout: 15_000, interval: 100 })
    .toEqual({ state: 'held', holder, token });
}

export type Held = { client: LeaseClient; lease: Lease; leaseKey: string; leaseId: string; body(more?: Partial<ForceBody>): ForceBody };

/** A lease held through lib/lease on `layout`, observed into `store`. */
export async function holdFenced(store: Store, layout: FencedLayout, label: string): Promise<Held> {
  const client = layout.client();
  const { leaseKey, leaseId } = layout.keys(`${label}-${uid()}`);
  const lease = (await client.acquire(leaseKey, { holder: 'worker', ttlMs: 30_000 }))!;
  expect(lease).not.toBeNull();
  await observed(store, leaseId, lease.holder, lease.token.toString());
  // Parsed as the API parses it (a body is checked once, there: lib/admin/force-request.ts).
  const body = (more: Partial<ForceBody> = {}): ForceBody => forceBody.parse({ expectedHolder: lease.holder, expectedToken: lease.token.toString(), reason: REASON, ...more });
  return { client, lease, leaseKey, leaseId, body };
}

/** The audit entries of one lease, oldest first. */
export async function auditOf(store: Store, leaseId: string): Promise<AuditRow[]> {
  return (await listAudit(store, { leaseId, limit: 100_000 })).rows.reverse();
}

/** The error a promise fails with; a test failure when it does not fail. */
export async function failureOf(promise: Promise<unknown>): Promise<Error & { status?: number; code?: string }> {
  const error = await promise.then(
    (value) => new Error(`expected a failure, got ${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)).slice(0, 300)}`),
    (e: unknown) => e as Error,
  );
  if (!('status' in error)) throw error;
  return error as Error & { status?: number; code?: string };
}
