// A Redlock lease: the same key on several independent Redis instances, held when a
// majority granted it; the client still produces a fencing token.
//
//   set -a; . .leasehold/services/env; set +a
//   node --import tsx docs/examples/lease-redlock.ts
//
// Give real, independent instances in LEASEHOLD_EXAMPLE_REDLOCK_URLS (comma-separated). Without
// it, the example uses databases 1, 2 and 3 of LEASEHOLD_TEST_REDIS_URL: that shows the API
// and the key layout, but three databases of one server are NOT independent instances and
// give none of Redlock's tolerance of a failed server.
import assert from 'node:assert/strict';
import { createLeaseClient } from '../../lib/lease';

const given = process.env.LEASEHOLD_EXAMPLE_REDLOCK_URLS?.split(',').filter(Boolean);
const base = process.env.LEASEHOLD_TEST_REDIS_URL;
if (!given && !base) throw new Error('set LEASEHOLD_EXAMPLE_REDLOCK_URLS or LEASEHOLD_TEST_REDIS_URL (source .leasehold/services/env)');
const urls = given ?? [1, 2, 3].map((db) => `${base!.replace(/\/\d*$/, '')}/${db}`);
if (!given) console.log(`no LEASEHOLD_EXAMPLE_REDLOCK_URLS: using ${urls.join(', ')} (one server, for trying the API only)`);

// Several urls: Redlock mode. driftFactor (default 0.01) is taken off each lease's validity.
const client = createLeaseClient({ backend: 'redis', urls, callTimeoutMs: 2_000 });
const key = 'docs-example:lock:redlock';

try {
  const lease = await client.acquire(key, { holder: 'worker-7', ttlMs: 3_000 });
  assert.ok(lease, 'the key should be free');
  // validUntil (monotonic clock) already excludes the drift allowance: ttl * 0.01 + 2 ms.
  console.log(`held on a majority of ${urls.length} instances, token ${lease.token}, certainly ours for ${Math.round(lease.validUntil - performance.now())} ms`);

  const info = await client.inspect(key);
  assert.equal(info?.holder, lease.holder);
  console.log(`inspect: holder ${info?.holder}, token ${info?.token}, ${info?.remainingMs} ms left (shortest PTTL of the majority)`);

  const renewed = await client.renew(lease);
  assert.equal(await client.release(renewed), true);
  console.log('renewed and released on every instance');
} finally {
  await client.close();
}
console.log('ok');
