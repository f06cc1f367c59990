// Leader election with createLeaderElector, on etcd's election layout: two candidates, the
// first leads, stops (its AbortController), and the second takes over with a higher token.
//
//   set -a; . .leasehold/services/env; set +a
//   node --import tsx docs/examples/elector.ts
//
// While it runs, `etcdctl --endpoints=$LEASEHOLD_TEST_ETCD_ENDPOINTS elect --listen <key>`
// shows the same leader. Uses a fresh key under "docs-example/election/" each run.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createLeaderElector, createLeaseClient } from '../../lib/lease';

const endpoints = process.env.LEASEHOLD_TEST_ETCD_ENDPOINTS?.split(',').filter(Boolean);
if (!endpoints?.length) throw new Error('set LEASEHOLD_TEST_ETCD_ENDPOINTS (source .leasehold/services/env)');

const key = `docs-example/election/digest-${randomBytes(3).toString('hex')}`;
const client = createLeaseClient({ backend: 'etcd', endpoints, callTimeoutMs: 2_000 });
const log: string[] = [];
const say = (line: string) => {
  log.push(line);
  console.log(line);
};

/** One candidate: leads until its signal aborts, and says when it started and stopped. */
function candidate(name: string) {
  const controller = new AbortController();
  let started!: (token: bigint) => void;
  const leading = new Promise<bigint>((resolve) => (started = resolve));
  const elector = createLeaderElector({
    client,
    key,
    holder: name,
    // client-go's rules: ttlMs > renewDeadlineMs (default 2/3 of ttlMs = 2000) > 1.2 × renewEveryMs.
    ttlMs: 3_000,
    renewEveryMs: 500,
    onStartedLeading: async (signal, token) => {
      say(`${name} leads with token ${token}`);
      started(token);
      // The leader's work: pass `token` with every protected write; stop when `signal` aborts.
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    onStoppedLeading: () => say(`${name} stopped leading`),
    onError: (error) => console.error(`${name}:`, error),
  });
  const running = elector.run(controller.signal); // campaigns, leads, renews; resigns on abort
  return { controller, leading, running, elector };
}

try {
  const first = candidate('worker-1');
  const firstToken = await first.leading;
  const second = candidate('worker-2'); // queues behind worker-1
  await new Promise((resolve) => setTimeout(resolve, 1_200)); // worker-1 renews meanwhile
  assert.equal(first.elector.isLeader(), true);
  assert.equal(second.elector.isLeader(), false);

  first.controller.abort(); // stop leading, resign: worker-2 need not wait for the TTL
  await first.running;
  const secondToken = await second.leading;
  assert.ok(secondToken > firstToken, 'the new leader has a higher token');

  second.controller.abort();
  await second.running;
  assert.deepEqual(
    log.map((line) => line.replace(/ with token \d+/, '')),
    ['worker-1 leads', 'worker-1 stopped leading', 'worker-2 leads', 'worker-2 stopped leading'],
  );
} finally {
  await client.close();
}
console.log('ok');
