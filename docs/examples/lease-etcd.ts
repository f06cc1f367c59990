// A lease in etcd: a key attached to an etcd lease, created only if absent; the token is
// the key's create revision.
//
//   set -a; . .leasehold/services/env; set +a
//   node --import tsx docs/examples/lease-etcd.ts
//
// Uses the key "docs-example/lock/weekly-digest" in LEASEHOLD_TEST_ETCD_ENDPOINTS.
import assert from 'node:assert/strict';
import { createLeaseClient, LeaseLostError } from '../../lib/lease';

const endpoints = process.env.LEASEHOLD_TEST_ETCD_ENDPOINTS?.split(',').filter(Boolean);
if (!endpoints?.length) throw new Error('set LEASEHOLD_TEST_ETCD_ENDPOINTS (source .leasehold/services/env)');

// callTimeoutMs bounds every call: an etcd call without a deadline can hang while a member dies.
const worker7 = createLeaseClient({ backend: 'etcd', endpoints, callTimeoutMs: 2_000 });
const worker3 = createLeaseClient({ backend: 'etcd', endpoints, callTimeoutMs: 2_000 });
const key = 'docs-example/lock/weekly-digest';

try {
  // etcd keeps TTLs in whole seconds and refuses less than 2 s: ttlMs below 2000 is a RangeError.
  await assert.rejects(worker7.acquire(key, { holder: 'worker-7', ttlMs: 1_000 }), RangeError);

  // 1. Acquire: grant an etcd lease, then a transaction that creates the key only if absent.
  const lease = await worker7.acquire(key, { holder: 'worker-7', ttlMs: 3_000 });
  assert.ok(lease, 'the key should be free');
  console.log(`worker-7 holds ${key}, token ${lease.token} (create revision), etcd lease ${BigInt(lease.ref!).toString(16)}`);

  // 2. Held: others get null.
  assert.equal(await worker3.acquire(key, { holder: 'worker-3', ttlMs: 3_000 }), null);

  // 3. Renew (one keepalive, after checking the key is still ours) and inspect.
  const renewed = await worker7.renew(lease);
  const info = await worker3.inspect(key);
  assert.equal(info?.token, lease.token);
  console.log(`inspect: holder ${info?.holder}, token ${info?.token}, ${info?.remainingMs} ms left (whole seconds)`);

  // 4. Release revokes the etcd lease, which deletes the key.
  assert.equal(await worker7.release(renewed), true);
  await assert.rejects(worker7.renew(renewed), LeaseLostError);

  // 5. A new grant: a new key, a higher create revision.
  const next = await worker3.acquire(key, { holder: 'worker-3', ttlMs: 3_000 });
  assert.ok(next && next.token > lease.token);
  console.log(`worker-3 now holds it with token ${next.token} (> ${lease.token})`);
  await worker3.release(next);
} finally {
  await worker7.close();
  await worker3.close();
}
console.log('ok');
