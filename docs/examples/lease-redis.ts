// A lease in Redis (one instance): SET NX PX plus a fence counter "<key>:fence".
//
//   set -a; . .leasehold/services/env; set +a
//   node --import tsx docs/examples/lease-redis.ts
//
// Uses the keys "docs-example:lock:weekly-digest" and "...:fence" in LEASEHOLD_TEST_REDIS_URL.
import assert from 'node:assert/strict';
import { createLeaseClient, LeaseLostError } from '../../lib/lease';

const redisUrl = process.env.LEASEHOLD_TEST_REDIS_URL;
if (!redisUrl) throw new Error('set LEASEHOLD_TEST_REDIS_URL (source .leasehold/services/env)');

const worker7 = createLeaseClient({ backend: 'redis', urls: [redisUrl] });
const worker3 = createLeaseClient({ backend: 'redis', urls: [redisUrl] });
const key = 'docs-example:lock:weekly-digest';

try {
  // 1. Acquire: one Lua script runs SET key holder NX PX ttl and INCR key:fence.
  const lease = await worker7.acquire(key, { holder: 'worker-7', ttlMs: 3_000 });
  assert.ok(lease, 'the key should be free');
  console.log(`worker-7 holds ${key} as ${lease.holder}, token ${lease.token}`);

  // 2. While it is held, others get null; waitMs keeps trying (here for 200 ms, then gives up).
  assert.equal(await worker3.acquire(key, { holder: 'worker-3', ttlMs: 3_000, waitMs: 200 }), null);

  // 3. Renew (PEXPIRE, only if the value and the fence are still ours) and inspect.
  const renewed = await worker7.renew(lease);
  const info = await worker3.inspect(key);
  assert.equal(info?.holder, lease.holder);
  assert.equal(info?.token, lease.token);
  console.log(`inspect: holder ${info?.holder}, token ${info?.token}, ${info?.remainingMs} ms left (PTTL)`);

  // 4. Release (DEL only if still ours); afterwards the lease is lost for renew.
  assert.equal(await worker7.release(renewed), true);
  await assert.rejects(worker7.renew(renewed), LeaseLostError);

  // 5. The fence counter keeps counting across grants.
  const next = await worker3.acquire(key, { holder: 'worker-3', ttlMs: 3_000 });
  assert.ok(next && next.token > lease.token);
  console.log(`worker-3 now holds it with token ${next.token} (> ${lease.token})`);
  await worker3.release(next);
} finally {
  await worker7.close();
  await worker3.close();
}
console.log('ok');
