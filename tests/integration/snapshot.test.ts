// `leasehold snapshot` against the test services: one read of every source, no server, no
// store, and every lease the layouts made is printed with its holder and token.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { etcdLayouts, postgresLayouts, redisLayouts, redlockQuorumLayout, type HeldLease, type Layout } from '../support/lease-layouts';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { STACK_LINE, cli } from '../support/run';
import { testServices } from '../support/services';

const services = testServices();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-snapshot-'));
let db: TestDatabase & { url: string };
let quorum: RedisServer[] = [];

beforeAll(async () => {
  db = await createPostgresDatabase('lh_snapshot');
  quorum = await Promise.all([16381, 16382, 16383].map((port) => startRedisServer(port)));
});
afterAll(async () => {
  await db.drop();
  await Promise.all(quorum.map((s) => s.stop()));
  rmSync(scratch, { recursive: true, force: true });
});

it('prints every lease the layouts made, with holder and token, and exits 0', async () => {
  const layouts: Layout[] = [
    ...postgresLayouts(() => db.url),
    ...redisLayouts(() => services.redisUrl),
    redlockQuorumLayout(() => quorum.map((s) => s.url)),
    ...etcdLayouts(() => services.etcdEndpoints[0]!),
  ];
  const held: { layout: Layout; lease: HeldLease }[] = [];
  try {
    for (const layout of layouts) {
      await layout.setup?.();
      held.push({ layout, lease: await layout.hold(`snap-${Math.random().toString(36).slice(2, 7)}`) });
    }
    // One config with every source the layouts read (sources sharing a name are the same source).
    const sources = new Map<string, SourceConfig>();
    for (const layout of layouts) sources.set(layout.source().name, layout.source());
    const file = path.join(scratch, 'config.json');
    writeFileSync(file, JSON.stringify({ sources: [...sources.values()] }));

    const result = await cli(['snapshot', '--config', file, '--json'], { DATABASE_URL: undefined });
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as {
      sources: { name: string; status: string }[];
      leases: { source: string; key: string; holder: string | null; token: string | null; state: string }[];
    };
    expect(printed.sources.every((s) => s.status === 'up')).toBe(true);
    for (const { layout, lease } of held) {
      const source = layout.source().name;
      const found = printed.leases.find((l) => l.source === source && l.key === lease.key);
      expect(found, `${layout.name}: ${lease.key}`).toBeDefined();
      expect(found!.state).toBe('held');
      if (typeof lease.holder === 'string') expect(found!.holder).toBe(lease.holder);
      else expect(found!.holder).toMatch(lease.holder);
      if (lease.token === null) expect(found!.token).toBeNull();
      else if (lease.token !== 'any') expect(found!.token).toBe(lease.token.toString());
    }

    // The human table names each of them too.
    const table = await cli(['snapshot', '--config', file], { DATABASE_URL: undefined });
    for (const { layout, lease } of held) expect(table.stdout).toContain(`${layout.source().name}/${lease.key}`);
    expect(table.stdout).not.toMatch(STACK_LINE);
  } finally {
    for (const { lease } of held) await lease.release().catch(() => {});
  }
}, 120_000);
