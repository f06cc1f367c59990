// Chaos on the alert receiver: it hangs (never answers), answers slowly (past Leasehold's
// timeout, and within it), then answers 500 for a minute, while the operator's force actions
// raise alerts. Every message must arrive once the receiver recovers, signed, under the one
// webhook-id it was first sent with; none is given up, none is sent under two ids.
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import { testServices } from '../support/services';
import { sleep, startWorld, uid, type Layout, type World } from './world';

const services = testServices();
const run = `chaos${uid()}`;
let world: World;
const layout: Layout = { source: 'redis', client: { backend: 'redis', urls: [services.redisUrl] }, key: (l) => `${run}:lease:${l}`, leaseId: (k) => `redis/${k}` };

beforeAll(async () => {
  const sources = [{ name: 'redis', backend: 'redis', urls: [services.redisUrl], match: [`${run}:lease:*`], fenceSuffix: ':fence', keyspaceNotifications: 'auto' }] as SourceConfig[];
  world = await startWorld({ sources });
  for (const label of ['digest', 'billing']) await world.hold(layout, label);
  await world.observed(world.holders);
});

afterAll(async () => {
  await world?.stop();
  const redis = new Redis(services.redisUrl);
  for await (const keys of redis.scanStream({ match: `${run}:*`, count: 1_000 })) if ((keys as string[]).length) await redis.del(...(keys as string[]));
  redis.disconnect();
});

/** Two leases force-expired while the receiver misbehaves: two force_action alerts to deliver. */
async function forceTwo(label: string) {
  const victims = [await world.hold(layout, `${label}-a`), await world.hold(layout, `${label}-b`)];
  await world.observed(victims);
  for (const victim of victims) expect(await world.forceExpire(victim)).toBe('done');
}

const attemptsOf = async () => (await world.store.prisma.webhookDelivery.findMany({ where: { webhookId: world.webhookId } })).reduce((n, d) => n + d.attempts, 0);

describe('chaos: the alert receiver', () => {
  it('hangs for 6 s: every message delivered after, once, under its first webhook-id', async () => {
    const fault = world.fault('Receiver hangs for 6 s', { source: '', down: false });
    await fault.begin();
    world.receiver.behave({ kind: 'hang' });
    await forceTwo('hang');
    await sleep(6_000);
    world.receiver.behave({ kind: 'ok' });
    fault.recovered();
    const row = await fault.check();
    expect(row.receipts).toBeGreaterThan(row.webhookIds); // the hung attempts reached it too, under the same ids
  });

  it('answers slowly: 1.5 s (past the 1 s timeout: sent again, same id), then 0.5 s', async () => {
    const fault = world.fault('Receiver answers in 1.5 s, then 0.5 s', { source: '', down: false });
    await fault.begin();
    world.receiver.behave({ kind: 'slow', ms: 1_500 });
    await forceTwo('slow');
    await sleep(4_000);
    world.receiver.behave({ kind: 'slow', ms: 500 });
    fault.recovered();
    await fault.check();
  });

  it('answers 500 for a minute: nothing given up, each message delivered once after', async () => {
    const before = await attemptsOf();
    const fault = world.fault('Receiver answers 500 for a minute', { source: '', down: false });
    await fault.begin();
    world.receiver.behave({ kind: 'status', status: 500 });
    await forceTwo('fivehundred');
    await sleep(60_000);
    world.receiver.behave({ kind: 'ok' });
    fault.recovered();
    const row = await fault.check();
    const retried = (await attemptsOf()) - before;
    console.log(`chaos: ${retried} attempts for ${row.webhookIds} messages over the minute of 500s`);
    expect(retried).toBeGreaterThan(2 * row.webhookIds);
  }, 150_000);
});
