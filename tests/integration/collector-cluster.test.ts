// The collector when the infrastructure fails: etcd's Raft leader killed in a three-member
// cluster, and several collectors against one store, one of them killed.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../lib/config';
import { startCollector, type Collector } from '../../lib/collector';
import { createBus, type BusMessage } from '../../lib/live/bus';
import { startRelay } from '../../lib/live/relay';
import { openStore, type Store } from '../../lib/db/store';
import { createLeaseClient } from '../../lib/lease';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { startEtcdCluster, type EtcdCluster } from '../support/etcd-cluster';
import { ROOT, testServices } from '../support/services';

const services = testServices();
const unique = () => randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-cluster-'));

let db: TestDatabase & { url: string };
let store: Store;
const children: ChildProcess[] = [];
const collectors: Collector[] = [];

beforeAll(async () => {
  db = await createPostgresDatabase('lh_cluster');
  store = await openStore({ kind: 'postgres', url: db.url });
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(collectors.splice(0).map((c) => c.stop()));
});
afterAll(async () => {
  await store.close();
  await db.drop();
  rmSync(scratch, { recursive: true, force: true });
});

describe('etcd leader killed in a three-member cluster', () => {
  // The test's own cluster: it kills a member, which it must not do to servers it did not start.
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcdCluster(25379);
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('records no invented event, and the source shows the new Raft leader and term', async () => {
    const endpoints = cluster.endpoints;
    const prefix = `cluster${unique()}/`;
    const key = `${prefix}leader`;
    const config = {
      sources: [{ name: 'ec', backend: 'etcd', endpoints, prefixes: [prefix] }],
      pollMs: 300,
      retention: { rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 },
      file: null,
      store: { kind: 'postgres', url: db.url },
      host: '127.0.0.1',
      port: 0,
      collectorLeaseTtlMs: 10_000,
    } as Config;
    collectors.push(startCollector({ store, config, log: () => {} }));
    const holder = fork(path.join(ROOT, 'tests', 'support', 'lease-holder.ts'), [], {
      execArgv: ['--import', 'tsx'],
      env: {
        ...process.env,
        LEASEHOLD_HOLDER: JSON.stringify({ lease: { backend: 'etcd', endpoints }, key, holder: 'steady', ttlMs: 15_000, renewEveryMs: 1_000, election: true }),
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.push(holder);
    await expect.poll(async () => (await store.prisma.lease.findUnique({ where: { id: `ec/${key}` } }))?.state, { timeout: 10_000 }).toBe('held');
    const before = (await store.prisma.source.findUniqueOrThrow({ where: { name: 'ec' } })).detail as { leader: string; raftTerm: string };

    // Kill the Raft leader, then bring it back.
    const etcd = new Etcd3({ hosts: endpoints });
    const status = await etcd.maintenance.status();
    const members = await etcd.cluster.memberList({});
    etcd.close();
    const leader = members.members.find((m) => String(m.ID) === String(status.leader))!;
    const member = cluster.members.find((m) => m.name === leader.name)!;
    await member.kill();
    try {
      await expect
        .poll(async () => ((await store.prisma.source.findUniqueOrThrow({ where: { name: 'ec' } })).detail as { leader: string } | null)?.leader, { timeout: 20_000 })
        .not.toBe(leader.name);
      await sleep(3_000);
    } finally {
      await member.restart();
    }
    const after = (await store.prisma.source.findUniqueOrThrow({ where: { name: 'ec' } })).detail as { leader: string; raftTerm: string };
    expect(BigInt(after.raftTerm) > BigInt(before.raftTerm)).toBe(true);
    expect(after.leader).not.toBe(leader.name);
    // The lease never changed hands: nothing but its first sighting is recorded.
    const events = await store.prisma.leaseEvent.findMany({ where: { leaseId: `ec/${key}` }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['acquired']);
    // If reads failed while there was no leader, the source went down and came back, in pairs.
    const sourceEvents = (await store.prisma.sourceEvent.findMany({ where: { sourceName: 'ec' }, orderBy: { seq: 'asc' } })).map((e) => e.type);
    expect(sourceEvents.join(',')).toMatch(/^(source_down,source_up,?)*$/);
    expect((await store.prisma.lease.findUniqueOrThrow({ where: { id: `ec/${key}` } })).stale).toBe(false);
  }, 90_000);
});

describe('two collectors against one store', () => {
  it('record each event exactly once, and a killed collector\'s source moves to the other', async () => {
    const prefix = `two${unique()}:`;
    const configFile = path.join(scratch, 'two.json');
    writeFileSync(
      configFile,
      JSON.stringify({ sources: [{ name: 'shared', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`] }], pollMs: 200 }),
    );
    const start = () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', 'collect'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: db.url, LEASEHOLD_CONFIG: configFile, LEASEHOLD_COLLECTOR_LEASE_TTL_MS: '3000' },
        stdio: 'ignore',
      });
      children.push(child);
      return child;
    };
    const collectorsByPid = new Map([start(), start()].map((c) => [c.pid!, c]));
    const owner = async () => (await store.prisma.source.findUnique({ where: { name: 'shared' } }))?.collectorId ?? null;
    await expect.poll(owner, { timeout: 20_000 }).not.toBeNull();

    const client = createLeaseClient({ backend: 'redis', urls: [services.redisUrl] });
    const cycle = async (name: string) => {
      const lease = (await client.acquire(`${prefix}job`, { holder: name, ttlMs: 30_000 }))!;
      await sleep(700);
      await client.release(lease);
      await sleep(700);
      return lease.holder;
    };
    const holders = [await cycle('one'), await cycle('two')];

    // Kill whoever observes the source; the other takes it over within one ownership TTL.
    const first = (await owner())!;
    const victim = collectorsByPid.get(Number(first.split(':')[1]))!;
    victim.kill('SIGKILL');
    await expect.poll(owner, { timeout: 15_000 }).not.toBe(first);
    holders.push(await cycle('three'));
    await client.close();

    await expect
      .poll(async () => (await store.prisma.leaseEvent.count({ where: { leaseId: `shared/${prefix}job`, holder: holders[2] } })), { timeout: 10_000 })
      .toBe(1);
    const events = await store.prisma.leaseEvent.findMany({ where: { leaseId: `shared/${prefix}job` }, orderBy: { seq: 'asc' } });
    const seen = events.map((e) => `${e.type}:${e.holder ?? e.previousHolder}`);
    for (const holder of holders.slice(0, 2)) {
      expect(seen.filter((s) => s === `acquired:${holder}`), seen.join('\n')).toHaveLength(1);
      expect(seen.filter((s) => s === `released:${holder}`), seen.join('\n')).toHaveLength(1);
    }
    expect(seen.filter((s) => s === `acquired:${holders[2]}`)).toHaveLength(1);
    // Sequence numbers are gapless and unique: nothing written twice, nothing lost.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  }, 90_000);
});

describe('a collector in another process', () => {
  it("reaches this process's live stream through the store (LISTEN/NOTIFY): leases, events, and its sources' reads", async () => {
    const prefix = `relay${unique()}:`;
    const configFile = path.join(scratch, 'relay.json');
    writeFileSync(configFile, JSON.stringify({ sources: [{ name: 'relayed', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`] }], pollMs: 200 }));
    const messages: BusMessage[] = [];
    // This process's bus, fed by its relay (no collector of its own here).
    const bus = createBus();
    const { unsubscribe } = bus.subscribe((message) => messages.push(message));
    const relay = startRelay(store, bus, () => undefined);
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', 'collect'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: db.url, LEASEHOLD_CONFIG: configFile },
      stdio: 'ignore',
    });
    children.push(child);
    const client = createLeaseClient({ backend: 'redis', urls: [services.redisUrl] });
    try {
      await expect.poll(async () => (await store.prisma.source.findUnique({ where: { name: 'relayed' } }))?.status, { timeout: 20_000 }).toBe('up');
      const lease = (await client.acquire(`${prefix}job`, { holder: 'far-away', ttlMs: 30_000 }))!;
      await expect
        .poll(() => messages.some((m) => m.type === 'lease' && m.lease.id === `relayed/${prefix}job` && m.lease.holder === lease.holder), { timeout: 5_000 })
        .toBe(true);
      // The relay publishes a write's leases, then reads and publishes its events.
      await expect
        .poll(() => messages.some((m) => m.type === 'event' && m.event.leaseId === `relayed/${prefix}job` && m.event.type === 'acquired'), { timeout: 5_000 })
        .toBe(true);
      // And each write of the source's row, so that pages here show its last read moving.
      const reads = () => new Set(messages.flatMap((m) => (m.type === 'source' && m.source.name === 'relayed' && m.source.status === 'up' ? [m.source.lastGoodReadAt] : [])));
      await expect.poll(() => reads().size, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
      await client.release(lease);
    } finally {
      unsubscribe();
      relay.stop();
      await client.close();
    }
  }, 60_000);
});
