// Chaos on the collector itself: two `leasehold collect` processes on one store; the one that
// observes the source is paused (SIGSTOP) past its ownership lease, the other takes the source
// over, the lease changes hands meanwhile, and the paused one is resumed. It must write nothing
// more for the source: every change recorded once, by the collector that owns the source.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { ROOT, testServices } from '../support/services';
import { sleep, startWorld, uid, until, type Layout, type World } from './world';

const services = testServices();
const run = `chaos${uid()}`;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-chaos-'));
const OWNERSHIP_TTL_MS = 3_000;
let world: World;
const children: { child: ChildProcess; output: string[] }[] = [];
const layout: Layout = { source: 'redis', client: { backend: 'redis', urls: [services.redisUrl] }, key: (l) => `${run}:lease:${l}`, leaseId: (k) => `redis/${k}` };

function collect() {
  const output: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', 'collect'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: world.storeUrl, LEASEHOLD_CONFIG: path.join(scratch, 'config.json'), LEASEHOLD_COLLECTOR_LEASE_TTL_MS: String(OWNERSHIP_TTL_MS), LEASEHOLD_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  children.push({ child, output });
  return { child, output };
}

beforeAll(async () => {
  const sources = [{ name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${run}:lease:*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }] as SourceConfig[];
  world = await startWorld({ sources, noCollector: true });
  writeFileSync(path.join(scratch, 'config.json'), JSON.stringify({ sources, pollMs: 500, alerts: { allowCidrs: ['127.0.0.1/32'] } }));
});

afterAll(async () => {
  for (const { child } of children) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  await world?.stop();
  const redis = new Redis(services.redisUrl);
  for await (const keys of redis.scanStream({ match: `${run}:*`, count: 1_000 })) if ((keys as string[]).length) await redis.del(...(keys as string[]));
  redis.disconnect();
  rmSync(scratch, { recursive: true, force: true });
});

describe('chaos: the collector', () => {
  it('paused past its ownership lease while another runs, then resumed: it writes nothing more', async () => {
    const first = collect();
    const owner = async () => (await world.store.prisma.source.findUnique({ where: { name: 'redis' } }))?.collectorId ?? null;
    const firstId = await until('the first collector owns the source', owner, (id) => id !== null && id.includes(`:${first.child.pid}:`), { timeout: 30_000 });
    for (const label of ['digest', 'billing']) await world.hold(layout, label);
    const moving = await world.hold(layout, 'moving');
    await world.observed(world.holders);
    const second = collect();
    await sleep(2_000); // the second one is up, waiting for a source to own

    const fault = world.fault('Collector paused past its ownership lease, another running, then resumed', { source: 'redis', down: false, steady: world.holders.filter((h) => h !== moving) });
    await fault.begin();
    first.child.kill('SIGSTOP');
    const secondId = await until('the second collector takes the source over', owner, (id) => id !== null && id !== firstId, { timeout: 20_000 });
    expect(secondId).toContain(`:${second.child.pid}:`);
    // The lease changes hands while the first is paused: only the second can see it.
    expect(await moving.client.release(moving.lease)).toBe(true);
    await moving.stop();
    world.holders.splice(world.holders.indexOf(moving), 1);
    await sleep(1_500);
    const successor = await world.hold({ ...layout, key: () => moving.key }, 'successor');
    await world.observed([successor]);
    const lines = () => first.output.join('');
    const before = lines().length;
    first.child.kill('SIGCONT');
    fault.recovered();
    // It learns it lost the source, and stops observing it, without writing.
    await until('the resumed collector stops observing', async () => lines().slice(before), (text) => /no longer observing redis/.test(text), { timeout: 15_000 });
    await sleep(2_000);
    expect(await owner()).toBe(secondId);
    const history = (await world.store.prisma.leaseEvent.findMany({ where: { leaseId: moving.leaseId, seq: { gt: 0 } }, orderBy: { seq: 'asc' } })).map((e) => `${e.type}:${e.holder ?? e.previousHolder}`);
    expect(history).toEqual([`acquired:${moving.lease.holder}`, `released:${moving.lease.holder}`, `acquired:${successor.lease.holder}`]);
    await fault.check();
  });
});
