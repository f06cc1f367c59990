// A clean release on etcd is a release at every TTL, never a missed renewal. Holders here
// renew on time (every third of their TTL, with etcd's own LeaseKeepAlive) right up to the
// moment they give the lease up, in each way a real holder does: revoking the lease (Go's
// concurrency.Session.Close, `etcdctl lock` on exit), deleting the key (Mutex.Unlock,
// Election.Resign), or both. Each is tried at TTL 2, 3, 4 and 10 s, on a single key and on a
// mutex candidate key, a moment after a renewal and just before the next one was due, with
// the collector's expiry proofs and deadline timers on and a 1 s poll, as the console runs.
// Every release must be recorded as `released` (no `expired`), and no missed_renewal raised.
// Beside them, at each TTL, a holder that simply stops renewing must still be `expired` with a
// missed_renewal: the judgement did not just stop calling anything an expiry. Nobody takes
// those again and etcd deleted their keys: their alerts resolve by themselves (the rule's
// resolveAfterMs, shortened here), instead of firing, and being re-sent, for ever.
import { randomBytes } from 'node:crypto';
import { Etcd3, type Lease } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collector } from '../../lib/collector';
import { updateRule } from '../../lib/db/alert-rules';
import { openStore, type Store } from '../../lib/db/store';
import { testCollector } from '../support/collector';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { testServices } from '../support/services';

const services = testServices();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let db: TestDatabase & { url: string };
let store: Store;
let etcd: Etcd3;
let collector: Collector;
const prefix = `rel${randomBytes(3).toString('hex')}/`;

beforeAll(async () => {
  db = await createPostgresDatabase('lh_etcd_release');
  store = await openStore({ kind: 'postgres', url: db.url });
  await updateRule(store, 'default-missed-renewal', { params: { resolveAfterMs: 3_000 } });
  etcd = new Etcd3({ hosts: services.etcdEndpoints, defaultCallOptions: () => ({ deadline: Date.now() + 5_000 }) });
  collector = testCollector(store, [{ name: 'etcd', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] } as never], {
    pollMs: 1_000,
    alerts: { allowCidrs: ['127.0.0.1/32'] },
  });
});
afterAll(async () => {
  await collector?.stop();
  etcd?.close();
  await store?.close();
  await db?.drop();
});

type Way = 'revoke' | 'delete' | 'delete then revoke' | 'stop renewing';
type Layout = 'single key' | 'mutex';
type When = 'just after a renewal' | 'just before the next renewal';
type Case = { ttlS: number; way: Way; layout: Layout; when: When; name: string };

const CASES: Case[] = [];
for (const ttlS of [2, 3, 4, 10]) {
  for (const way of ['revoke', 'delete', 'delete then revoke'] as Way[]) {
    for (const layout of ['single key', 'mutex'] as Layout[]) {
      for (const when of ['just after a renewal', 'just before the next renewal'] as When[]) {
        CASES.push({ ttlS, way, layout, when, name: `${prefix}t${ttlS}-${way.replaceAll(' ', '-')}-${layout.replace(' ', '-')}-${when.split(' ')[1]}` });
      }
    }
  }
  for (const layout of ['single key', 'mutex'] as Layout[]) {
    CASES.push({ ttlS, way: 'stop renewing', layout, when: 'just after a renewal', name: `${prefix}t${ttlS}-stop-${layout.replace(' ', '-')}` });
  }
}

/** Holds a lease like a well-behaved holder: granted, renewed every third of its TTL, then released. */
async function holdAndRelease(c: Case): Promise<{ leaseId: string; key: string }> {
  const lease: Lease = etcd.lease(c.ttlS, { autoKeepAlive: false });
  const id = await lease.grant();
  const key = c.layout === 'mutex' ? `${c.name}/${BigInt(id).toString(16)}` : c.name;
  await lease.put(key).value(c.layout === 'mutex' ? '' : `holder-${c.ttlS}`);
  const everyMs = (c.ttlS * 1000) / 3;
  let next = performance.now();
  // Enough renewals for the collector to have seen the lease held and renewed.
  for (let i = 0; i < Math.max(3, Math.ceil(6_000 / everyMs)); i++) {
    next += everyMs;
    await sleep(next - performance.now());
    await lease.keepaliveOnce();
  }
  if (c.way === 'stop renewing') {
    lease.release(); // no more keepalives: etcd lets it run out and revokes it
    return { leaseId: c.layout === 'mutex' ? c.name : key, key };
  }
  await sleep(c.when === 'just after a renewal' ? 300 : everyMs - 60);
  if (c.way !== 'revoke') await etcd.delete().key(key);
  if (c.way !== 'delete') await lease.revoke();
  else {
    // The key is gone; the lease itself is left to run out (as after Mutex.Unlock without
    // closing the session): nothing is attached to it any more.
    lease.release();
  }
  return { leaseId: c.layout === 'mutex' ? c.name : key, key };
}

describe('etcd: a clean release is a release', () => {
  it('at TTL 2, 3, 4 and 10 s, each way of releasing, on a single key and a mutex', async () => {
    const held = await Promise.all(CASES.map(async (c) => ({ c, ...(await holdAndRelease(c)) })));
    const ids = held.map((h) => `etcd/${h.leaseId}`);
    // Each end recorded...
    await expect
      .poll(async () => (await store.prisma.leaseEvent.findMany({ where: { leaseId: { in: ids }, type: { in: ['released', 'expired'] } } })).length, { timeout: 20_000 })
      .toBeGreaterThanOrEqual(ids.length);
    // ...and nothing more said of them while a missed renewal would have had time to be judged.
    await sleep(4_000);
    const events = await store.prisma.leaseEvent.findMany({ where: { leaseId: { in: ids } }, orderBy: [{ leaseId: 'asc' }, { seq: 'asc' }] });
    const ends = new Map<string, string[]>();
    for (const e of events) if (e.type !== 'acquired') ends.set(e.leaseId, [...(ends.get(e.leaseId) ?? []), e.type]);
    const expected = (c: Case) => (c.way === 'stop renewing' ? 'expired' : 'released');
    const wrong = held.filter((h) => (ends.get(`etcd/${h.leaseId}`) ?? []).join() !== expected(h.c)).map((h) => `etcd/${h.leaseId}: ${(ends.get(`etcd/${h.leaseId}`) ?? []).join(', ') || 'nothing'}`);
    expect(wrong, 'leases whose end was not recorded as one release (or, stopped, one expiry)').toEqual([]);
    const missed = () => store.prisma.alert.findMany({ where: { leaseId: { in: ids }, ruleType: 'missed_renewal' }, orderBy: { leaseId: 'asc' } });
    expect((await missed()).map((a) => a.leaseId)).toEqual(held.filter((h) => h.c.way === 'stop renewing').map((h) => `etcd/${h.leaseId}`).sort());
    await expect.poll(async () => (await missed()).map((a) => a.state), { timeout: 10_000 }).toEqual(Array(8).fill('resolved'));
  }, 90_000);
});
