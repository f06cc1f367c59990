// A Redlock source read by two lanes at once, as the collector does (a poll's full read and the
// named keys of change hints overlap): every instance answers both, and none is counted as not
// answering for being asked twice (lib/sources/redis/instances.ts withinDeadline gives up only
// on an instance whose call outlived its deadline).
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSource } from '../../lib/sources/registry';
import type { LeaseSource } from '../../lib/sources/types';
import { testServices } from '../support/services';

const services = testServices();
const prefix = `overlap${randomBytes(3).toString('hex')}:`;
// Three instances: three databases of the test Redis (a quorum needs distinct keyspaces, not distinct servers).
const urls = [1, 2, 3].map((db) => `${services.redisUrl.replace(/\/\d*$/, '')}/${db}`);
const clients = urls.map((url) => new Redis(url));
let source: LeaseSource;

beforeAll(async () => {
  for (const client of clients) for (let i = 0; i < 200; i++) await client.set(`${prefix}${i}`, `holder-${i}`, 'PX', 60_000);
  source = createSource({ name: 'overlap', backend: 'redis', urls, mode: 'redlock', match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'off', pollMs: 250 }, 250);
});
afterAll(async () => {
  await source.close();
  for (const client of clients) {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length) await client.del(...keys);
    client.disconnect();
  }
});

it('full reads and named-key reads at once: all answered, every instance up', async () => {
  const rounds = await Promise.all(
    Array.from({ length: 5 }, (_, round) =>
      Promise.all([
        source.snapshot(AbortSignal.timeout(10_000)),
        ...Array.from({ length: 4 }, (_, i) => source.readKeys!([`${prefix}${round * 4 + i}`], AbortSignal.timeout(10_000))),
      ]),
    ),
  );
  for (const [snapshot, ...keyReads] of rounds) {
    expect(snapshot.observations).toHaveLength(200);
    for (const read of keyReads) expect(read.observations).toHaveLength(1);
  }
  const last = await source.snapshot(AbortSignal.timeout(10_000));
  expect((last.status as { instances: { up: boolean; error: string | null }[] }).instances.map((i) => [i.up, i.error])).toEqual([
    [true, null],
    [true, null],
    [true, null],
  ]);
});
