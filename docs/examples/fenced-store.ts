// Fencing: a holder that was paused past its lease writes late, and the resource refuses it.
//
//   set -a; . .leasehold/services/env; set +a
//   node --import tsx docs/examples/fenced-store.ts
//
// Uses the tables "docs_example_leases", "docs_example_fenced" and "docs_example_fenced_log"
// (created if absent) in LEASEHOLD_TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createFencedStore, createLeaseClient } from '../../lib/lease';

const url = process.env.LEASEHOLD_TEST_DATABASE_URL;
if (!url) throw new Error('set LEASEHOLD_TEST_DATABASE_URL (source .leasehold/services/env)');

const leases = createLeaseClient({ backend: 'postgres', url, table: 'docs_example_leases' });
const store = createFencedStore({ url, table: 'docs_example_fenced' });
const run = randomBytes(3).toString('hex');
const key = `digest-job-${run}`;
const resource = `digest:2026-W49:${run}`;

try {
  // 1. worker-1 gets the lease (a short TTL, to keep the example short) and writes with its token.
  const first = await leases.acquire(key, { holder: 'worker-1', ttlMs: 300 });
  assert.ok(first);
  assert.equal(await store.write(resource, first.token, 'worker-1: sending'), 'accepted');

  // 2. worker-1 "pauses" (a GC pause, a stopped VM) past its TTL; the lease expires...
  await new Promise((resolve) => setTimeout(resolve, 400));

  // 3. ...worker-2 gets it, with a higher token, and writes.
  const second = await leases.acquire(key, { holder: 'worker-2', ttlMs: 5_000 });
  assert.ok(second && second.token > first.token);
  assert.equal(await store.write(resource, second.token, 'worker-2: sending'), 'accepted');

  // 4. worker-1 wakes up and writes with its old token: rejected, in the same statement
  //    that checks it, so no two writers can both pass the check.
  assert.equal(await store.write(resource, first.token, 'worker-1: sent (late)'), 'rejected');

  console.log(`highest token accepted for ${resource}: ${await store.highestToken(resource)}`);
  for (const write of await store.log(resource)) console.log(`  #${write.seq} token ${write.token}: ${write.value}`);
  await leases.release(second);
} finally {
  await leases.close();
  await store.close();
}
console.log('ok');
