// A lease in a PostgreSQL table: acquire, renew, inspect, release, and the fencing token.
//
//   set -a; . .leasehold/services/env; set +a
//   node --import tsx docs/examples/lease-postgres.ts
//
// Uses the table "docs_example_leases" (created if absent) in LEASEHOLD_TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { createLeaseClient, LeaseLostError } from '../../lib/lease';

const url = process.env.LEASEHOLD_TEST_DATABASE_URL;
if (!url) throw new Error('set LEASEHOLD_TEST_DATABASE_URL (source .leasehold/services/env)');

// Two clients, as two processes would have: each records its holder as "<name>:<instance suffix>".
const worker7 = createLeaseClient({ backend: 'postgres', url, table: 'docs_example_leases' });
const worker3 = createLeaseClient({ backend: 'postgres', url, table: 'docs_example_leases' });
const key = 'weekly-digest';

try {
  // 1. Acquire: a Lease, or null when someone else holds the key.
  const lease = await worker7.acquire(key, { holder: 'worker-7', ttlMs: 5_000 });
  assert.ok(lease, 'the key should be free');
  console.log(`worker-7 holds ${key} as ${lease.holder}, token ${lease.token}, expires about ${lease.expiresAt.toISOString()}`);

  // 2. Someone else asks while it is held: null (waitMs would keep trying that long).
  assert.equal(await worker3.acquire(key, { holder: 'worker-3', ttlMs: 5_000 }), null);
  console.log('worker-3 was refused while worker-7 holds it');

  // 3. Renew: the same token, a new expiry. The table's clock (now()) judges expiry.
  const renewed = await worker7.renew(lease);
  assert.equal(renewed.token, lease.token);

  // 4. Inspect: what anyone can see.
  const info = await worker3.inspect(key);
  assert.equal(info?.holder, lease.holder);
  console.log(`inspect: holder ${info?.holder}, token ${info?.token}, ${info?.remainingMs} ms left`);

  // 5. Release: true when it was ours; after that, renewing fails with LeaseLostError.
  assert.equal(await worker7.release(renewed), true);
  assert.equal(await worker7.release(renewed), false);
  await assert.rejects(worker7.renew(renewed), LeaseLostError);
  console.log('released; a second release says false, a renew says LeaseLostError');

  // 6. The next grant gets a higher token: a write fenced with the old one can be refused.
  const next = await worker3.acquire(key, { holder: 'worker-3', ttlMs: 5_000 });
  assert.ok(next && next.token > lease.token);
  console.log(`worker-3 now holds it with token ${next.token} (> ${lease.token})`);
  await worker3.release(next);
} finally {
  await worker7.close();
  await worker3.close();
}
console.log('ok');
