// The fencing checker, end to end: worker processes contend for a lease on each backend
// and write to a fenced store with their tokens, while the harness pauses the leader in
// the middle of its work for longer than the TTL (SIGSTOP, then SIGCONT) and kills workers
// (SIGKILL). The checker then reads the whole history. With a store that checks tokens it
// must find nothing; with one that does not, it must report the stale writes: a checker
// that cannot fail proves nothing.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFencedHistory, type AttemptedWrite } from '../../lib/domain/fencing-history';
import { createFencedStore, type LeaseClientOptions } from '../../lib/lease';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { ROOT, testServices } from '../support/services';

const WORKER = path.join(ROOT, 'tests', 'support', 'fencing-worker.ts');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let db: TestDatabase & { url: string };
beforeAll(async () => {
  db = await createPostgresDatabase('lh_fencing');
});
afterAll(() => db.drop());

type Run = { attempts: AttemptedWrite[]; pauses: number; kills: number; staleAttempts: number };

async function runWorkers(lease: LeaseClientOptions, timing: { ttlMs: number; renewEveryMs: number }, checkTokens: boolean, label: string): Promise<Run> {
  const key = lease.backend === 'etcd' ? `fencing/${label}` : `fencing-${label}`;
  const resource = `resource-${label}`;
  const storeTable = `fenced_${label.replace(/-/g, '_')}`;
  const attempts = new Map<string, AttemptedWrite>();
  const workers = new Set<ChildProcess>();
  let leader: ChildProcess | null = null;
  let pauseArmed = false;
  let paused: ChildProcess | null = null;
  let pauses = 0;
  let kills = 0;
  let staleAttempts = 0;
  const pausedValues = new Set<string>();
  let spawned = 0;

  const spawnWorker = () => {
    const name = `w${++spawned}`;
    const child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
      env: {
        ...process.env,
        LEASEHOLD_WORKER: JSON.stringify({
          name,
          lease,
          key,
          ...timing,
          storeUrl: db.url,
          storeTable,
          checkTokens,
          resource,
          workMs: 120,
        }),
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    workers.add(child);
    child.on('exit', () => workers.delete(child));
    child.on('message', (message: { type: string; value?: string; token?: string; outcome?: AttemptedWrite['outcome'] }) => {
      if (message.type === 'leading') leader = child;
      if (message.type === 'intent') {
        attempts.set(message.value!, { writer: name, value: message.value!, token: BigInt(message.token!), outcome: 'unknown' });
        // Pause the leader right after it decided to write and before it writes: its
        // lease runs out while it is stopped, and someone else takes over.
        if (pauseArmed && child === leader && paused === null) {
          pauseArmed = false;
          paused = child;
          pausedValues.add(message.value!);
          child.kill('SIGSTOP');
          pauses++;
          setTimeout(() => {
            child.kill('SIGCONT');
            paused = null;
          }, timing.ttlMs + 2_500);
        }
      }
      if (message.type === 'result') {
        const attempt = attempts.get(message.value!);
        if (attempt) attempt.outcome = message.outcome!;
        if (pausedValues.has(message.value!)) staleAttempts++;
      }
    });
    return child;
  };

  for (let i = 0; i < 4; i++) spawnWorker();
  const deadline = Date.now() + 60_000;
  // Faults, on a schedule: pause the leader mid-work three times, and kill a worker
  // (never the paused one) between pauses, starting a replacement.
  while ((staleAttempts < 3 || pauses < 3) && Date.now() < deadline) {
    await sleep(800);
    if (paused === null && !pauseArmed) {
      if (pauses > 0 && kills < pauses) {
        const victim = [...workers].find((w) => w !== leader && w !== paused);
        if (victim) {
          victim.kill('SIGKILL');
          kills++;
          spawnWorker();
        }
      }
      await sleep(timing.ttlMs);
      pauseArmed = true;
    }
  }
  await sleep(timing.ttlMs);
  for (const worker of workers) worker.kill('SIGCONT');
  await Promise.all(
    [...workers].map(
      (worker) =>
        new Promise<void>((resolve) => {
          worker.once('exit', () => resolve());
          worker.kill('SIGTERM');
          setTimeout(() => worker.kill('SIGKILL'), 5_000);
        }),
    ),
  );
  return { attempts: [...attempts.values()], pauses, kills, staleAttempts };
}

function report(backend: string, store: string, run: Run, finalWrites: number, violations: number) {
  const count = (outcome: AttemptedWrite['outcome']) => run.attempts.filter((a) => a.outcome === outcome).length;
  console.log(
    `fencing checker, ${backend}, ${store} store: ${run.pauses} pauses, ${run.kills} kills, ${run.staleAttempts} writes after a pause; ` +
      `${count('accepted')} accepted, ${count('rejected')} rejected, ${count('unknown')} unknown; ${finalWrites} in the final state; ${violations} violations`,
  );
}

async function finalState(label: string) {
  const store = createFencedStore({ url: db.url, table: `fenced_${label.replace(/-/g, '_')}` });
  try {
    return await store.log(`resource-${label}`);
  } finally {
    await store.close();
  }
}

const services = testServices();
const BACKENDS: { name: string; lease: () => LeaseClientOptions; timing: { ttlMs: number; renewEveryMs: number } }[] = [
  { name: 'postgres', lease: () => ({ backend: 'postgres', url: db.url, table: 'fencing_leases' }), timing: { ttlMs: 1_000, renewEveryMs: 150 } },
  { name: 'redis', lease: () => ({ backend: 'redis', urls: [services.redisUrl] }), timing: { ttlMs: 1_000, renewEveryMs: 150 } },
  { name: 'etcd', lease: () => ({ backend: 'etcd', endpoints: services.etcdEndpoints }), timing: { ttlMs: 2_000, renewEveryMs: 300 } },
];

describe('fencing history checker', () => {
  it.each(BACKENDS)('finds no violation on $name with a store that checks tokens', async ({ name, lease, timing }) => {
    const label = `${name}-fenced-${Date.now()}`;
    const run = await runWorkers(lease(), timing, true, label);
    const final = await finalState(label);
    // The run exercised the danger: paused leaders came back and tried stale writes...
    expect(run.pauses).toBeGreaterThanOrEqual(3);
    expect(run.kills).toBeGreaterThanOrEqual(2);
    expect(run.staleAttempts).toBeGreaterThanOrEqual(3);
    expect(run.attempts.filter((a) => a.outcome === 'rejected').length).toBeGreaterThanOrEqual(1);
    expect(run.attempts.filter((a) => a.outcome === 'accepted').length).toBeGreaterThan(10);
    // ...and the checker found the history clean.
    const violations = checkFencedHistory(run.attempts, final);
    report(name, 'fenced', run, final.length, violations.length);
    expect(violations).toEqual([]);
  }, 120_000);

  it('reports the stale writes when the store does not check tokens', async () => {
    const label = `postgres-unfenced-${Date.now()}`;
    const run = await runWorkers(BACKENDS[0]!.lease(), BACKENDS[0]!.timing, false, label);
    const final = await finalState(label);
    const violations = checkFencedHistory(run.attempts, final);
    report('postgres', 'unfenced', run, final.length, violations.length);
    expect(run.staleAttempts).toBeGreaterThanOrEqual(3);
    expect(violations.length).toBeGreaterThanOrEqual(1);
    expect(violations.every((v) => v.kind === 'stale_write_accepted')).toBe(true);
  }, 120_000);
});
