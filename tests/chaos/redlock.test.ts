// Chaos on a Redlock quorum: one of three Redis instances frozen (SIGSTOP: connections open,
// nothing answered) while the collector reads the quorum and the operator force-expires.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { startRedisServer, type RedisServer } from '../support/redis-servers';
import { sleep, startWorld, uid, until, POLL_MS, type Layout, type World } from './world';

const run = `chaos${uid()}`;
const servers: RedisServer[] = [];
let world: World;
const layout = (): Layout => ({ source: 'quorum', client: { backend: 'redis', urls: servers.map((s) => s.url) }, key: (l) => `${run}:q:${l}`, leaseId: (k) => `quorum/${k}` });

beforeAll(async () => {
  // One after the other: a server that started is stopped by afterAll even when the next fails.
  for (const port of [16412, 16413, 16414]) servers.push(await startRedisServer(port, ['--notify-keyspace-events', 'KEA']));
  const sources = [{ name: 'quorum', backend: 'redis', urls: servers.map((s) => s.url), match: [`${run}:q:*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }] as SourceConfig[];
  world = await startWorld({ sources });
  for (const label of ['digest', 'billing', 'reports']) await world.hold(layout(), label);
  await world.observed(world.holders);
});

afterAll(async () => {
  for (const s of servers) s.process.kill('SIGCONT');
  await world?.stop();
  await Promise.all(servers.map((s) => s.stop()));
});

type InstanceDetail = { instance: string; up: boolean };

describe('chaos: Redlock', () => {
  it('one of three instances frozen: shown not answering within two polls, the others read, nothing invented', async () => {
    const victim = await world.hold(layout(), 'victim');
    await world.observed([victim]);
    const fault = world.fault('One of three Redlock instances frozen', { source: 'quorum', down: false });
    await fault.begin();
    const frozen = servers[2]!;
    frozen.process.kill('SIGSTOP');
    const frozeAt = Date.now();
    const instances = async () => ((await world.store.prisma.source.findUniqueOrThrow({ where: { name: 'quorum' } })).detail as { instances?: InstanceDetail[] } | null)?.instances ?? [];
    await until('the frozen instance shown not answering', instances, (list) => list.some((i) => i.instance.endsWith(`:${frozen.port}`) && !i.up), { timeout: 5_000, interval: 50 });
    const shownAfterMs = Date.now() - frozeAt;
    // Within a bound tied to the poll (its answer deadline, at least a poll), not the 5 s read deadline.
    expect(shownAfterMs).toBeLessThan(4 * POLL_MS + 1_000);
    // The quorum still answers: the steady leases stay held and fresh.
    await world.observed(world.holders.filter((h) => h !== victim), 5_000);
    // The operator tries: a Redlock quorum has no compare-and-set across its instances, so the
    // action is refused (422, audited) rather than applied on some of them (docs/admin-actions.md).
    const outcome = await world.forceExpire(victim);
    expect(outcome).toBe('refused');
    await sleep(2_000);
    frozen.process.kill('SIGCONT');
    fault.recovered();
    await until('every instance answering again', instances, (list) => list.length === 3 && list.every((i) => i.up), { timeout: 10_000, interval: 50 });
    const row = await fault.check();
    console.log(`chaos: frozen instance shown not answering after ${shownAfterMs} ms; force-expire ${outcome}; ${row.actions}`);
  });
});
