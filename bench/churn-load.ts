// The load of bench/churn-bench.ts, in its own process so its CPU is not counted as the
// collector's: `rate` acquire/release pairs a second of short Redis locks taken with
// Leasehold's own client (lib/lease: SET NX PX and INCR of the fence in one script), each on
// a key of the pool that nobody holds, held `holdMinMs`..`holdMaxMs` (less than the poll
// interval), then released. It reports every grant's token per key, so the bench can check
// that the collector accounted for each one.
import { createRedisBackend } from '../lib/lease/redis';

type Setup = { redisUrl: string; prefix: string; keys: number; rate: number; seconds: number; holdMinMs: number; holdMaxMs: number };
type Message = { type: 'setup'; setup: Setup } | { type: 'start' };

const TICK_MS = 10;
let setup: Setup | null = null;
let started = false;
process.on('message', (message: Message) => {
  if (message.type === 'setup') setup = message.setup;
  if (message.type === 'start') started = true;
});
process.on('disconnect', () => process.exit(0));
while (!setup) await new Promise((resolve) => setTimeout(resolve, 20));
const config: Setup = setup;
const backend = createRedisBackend({ urls: [config.redisUrl] });
const keyOf = (i: number) => `${config.prefix}${i}`;
const holder = `churn:${process.pid.toString(16).padStart(8, '0')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Every key granted once and held, so the collector knows each before the churn begins.
const first = await Promise.all(Array.from({ length: config.keys }, (_, i) => backend.tryAcquire(keyOf(i), holder, 60_000)));
if (first.some((grant) => grant === null)) throw new Error('a key of the pool was already held');
process.send?.({ type: 'ready' });
while (!started) await sleep(20);
await Promise.all(first.map((grant, i) => backend.release(keyOf(i), holder, grant!)));

const free = Array.from({ length: config.keys }, (_, i) => i);
const tokens: Record<string, string[]> = {};
let pairs = 0;
let refused = 0;
let failed = 0;
let inFlight = 0;
const hold = async (i: number) => {
  inFlight++;
  try {
    const grant = await backend.tryAcquire(keyOf(i), holder, 5_000);
    if (!grant) {
      refused++;
      return;
    }
    (tokens[keyOf(i)] ??= []).push(grant.token.toString());
    await sleep(config.holdMinMs + Math.random() * (config.holdMaxMs - config.holdMinMs));
    await backend.release(keyOf(i), holder, grant);
    pairs++;
  } catch {
    failed++;
  } finally {
    inFlight--;
    free.push(i);
  }
};
const startedAt = performance.now();
let begun = 0;
while (performance.now() - startedAt < config.seconds * 1000) {
  const tick = performance.now();
  // As many pairs begun as the rate asks by now (a late tick catches up).
  const due = Math.floor((config.rate * (tick - startedAt)) / 1000);
  while (begun < due && free.length > 0) {
    begun++;
    // A random free key: keys are taken in no particular order, as orders and tenants are.
    const at = Math.floor(Math.random() * free.length);
    const [i] = free.splice(at, 1);
    void hold(i!);
  }
  await sleep(Math.max(0, TICK_MS - (performance.now() - tick)));
}
while (inFlight > 0) await sleep(20);
const seconds = (performance.now() - startedAt) / 1000;
process.send?.({ type: 'done', tokens, pairs, refused, failed, seconds });
await backend.close();
