// Redis source: lock keys matching the configured patterns, found with SCAN (never KEYS).
//
//   K        the lock; its value is the holder (Leasehold's layout, node-redlock and most
//            libraries: SET K <random> NX PX ttl)
//   K:fence  a fence counter, when present (Leasehold's layout): the token
//   PTTL K   the remaining time
//
// Several URLs form a Redlock quorum: a key is held when a majority of the instances hold
// it with the same value; the source shows on how many instances and by whom.
//
// Push: when the server has keyspace notifications on (or the config asks to turn them on),
// a change to a key is re-read at once; polling goes on regardless. Values are untrusted:
// binary, huge or of another type, they are shown escaped and never crash the read.
import Redis from 'ioredis';
import type { RedisSourceConfig } from '../../config';
import { redactUrlPassword } from '../../config';
import { displayText } from '../../domain/display';
import type { Observation } from '../../domain/observe';
import { connectionProblem, SourceUnavailableError } from '../errors';
import { RECONCILE_EVERY_MS, type ChangeHint, type LeaseSource, type PollResult, type SourceSnapshot, type SourceStatusDetail } from '../types';

const READ_TIMEOUT_MS = 5_000;
const SCAN_COUNT = 1_000;
const READ_BATCH = 500;

// For each key, four entries in one flat list (cheaper to decode than nested ones): its
// type, its value (strings only), its PTTL, and its fence (when that is a string).
const READ_KEYS = `
local out = {}
local n = 0
for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k)['ok']
  local v = false
  if t == 'string' then v = redis.call('GET', k) end
  local f = false
  local fk = k .. ARGV[1]
  if redis.call('TYPE', fk)['ok'] == 'string' then f = redis.call('GET', fk) end
  out[n + 1] = t
  out[n + 2] = v
  out[n + 3] = redis.call('PTTL', k)
  out[n + 4] = f
  n = n + 4
end
return out`;

type RawKey = string; // the key's bytes as a latin1 string: exact, and usable as a Map key and an argument
type KeyRead = { type: string; value: Buffer | null; pttl: number; fence: Buffer | null };
type ReaderRedis = Redis & { readKeysBuffer(...args: (string | Buffer | number)[]): Promise<(Buffer | number | null)[]> };

const toBuffer = (raw: RawKey) => Buffer.from(raw, 'latin1');
/** A key as a command argument: ASCII as a string (one write), anything else as its exact bytes. */
// eslint-disable-next-line no-control-regex -- ASCII is the point
const toArgument = (raw: RawKey) => (/^[\x00-\x7f]*$/.test(raw) ? raw : toBuffer(raw));
const isCounter = (value: Buffer | null) => value !== null && /^\d+$/.test(value.toString('latin1'));

function instanceLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return redactUrlPassword(url);
  }
}

function dbOf(url: string): number {
  try {
    return Number(new URL(url).pathname.slice(1)) || 0;
  } catch {
    return 0;
  }
}

export function createRedisSource(config: RedisSourceConfig, defaultPollMs: number): LeaseSource {
  const suffix = config.fenceSuffix;
  const instances = config.urls.map((url) => {
    const redis = new Redis(url, {
      connectTimeout: READ_TIMEOUT_MS,
      socketTimeout: READ_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
    }) as ReaderRedis;
    const instance = { url, label: instanceLabel(url), redis, notifications: false as boolean, lastError: null as string | null, connectionError: null as string | null };
    // What went wrong with the connection itself: a command failing while disconnected only
    // says that it was not sent ("max retries per request"), this says why.
    redis.on('error', (error) => (instance.connectionError = connectionProblem(error, `Redis at ${instanceLabel(url)}`)));
    redis.on('ready', () => (instance.connectionError = null));
    redis.defineCommand('readKeys', { lua: READ_KEYS });
    return instance;
  });
  /** Why a call to an instance failed, in words. */
  const problemOf = (instance: (typeof instances)[number], reason: unknown) =>
    instance.redis.status !== 'ready' && instance.connectionError
      ? instance.connectionError
      : redactUrlPassword(connectionProblem(reason, `Redis at ${instance.label}`));
  const quorum = Math.floor(instances.length / 2) + 1;
  const redlock = instances.length > 1;

  async function scanInstance(redis: Redis, signal: AbortSignal): Promise<Set<RawKey>> {
    const keys = new Set<RawKey>();
    for (const pattern of config.match) {
      let cursor = '0';
      do {
        if (signal.aborted) throw new Error('the read was cancelled');
        const [next, found] = await redis.scanBuffer(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
        cursor = next.toString();
        for (const key of found) keys.add(key.toString('latin1'));
      } while (cursor !== '0');
    }
    return keys;
  }

  async function readInstance(redis: ReaderRedis, keys: RawKey[]): Promise<Map<RawKey, KeyRead>> {
    const reads = new Map<RawKey, KeyRead>();
    for (let i = 0; i < keys.length; i += READ_BATCH) {
      const batch = keys.slice(i, i + READ_BATCH);
      const flat = await redis.readKeysBuffer(batch.length, ...batch.map(toArgument), suffix);
      for (let index = 0; index < batch.length; index++) {
        reads.set(batch[index]!, {
          type: String(flat[index * 4]),
          value: flat[index * 4 + 1] as Buffer | null,
          pttl: Number(flat[index * 4 + 2]),
          fence: flat[index * 4 + 3] as Buffer | null,
        });
      }
    }
    return reads;
  }

  /** One key's observation from what each instance said about it (one entry per answering instance). */
  function observe(raw: RawKey, views: (KeyRead | undefined)[], allKeys: Set<RawKey>): Observation | null {
    const key = displayText(toBuffer(raw));
    const present = views.filter((v): v is KeyRead => v !== undefined && v.type !== 'none');
    if (present.length === 0) return null;
    // A fence is not a lease of its own: a counter named like one, or anything beside its lock key.
    if (raw.endsWith(suffix) && (allKeys.has(raw.slice(0, -suffix.length)) || present.every((v) => v.type === 'string' && isCounter(v.value)))) {
      return null;
    }
    const wrongType = present.find((v) => v.type !== 'string');
    if (wrongType) {
      return { key, kind: 'lock', holder: null, token: null, ttlMs: null, remainingMs: null, candidates: [], problem: `the key holds a ${wrongType.type}, not a string: it is not a lock this source can read` };
    }
    const tokenOf = (v: KeyRead) => (isCounter(v.fence) ? BigInt(v.fence!.toString('latin1')) : null);
    if (!redlock) {
      const [view] = present;
      const fenceGarbage = view!.fence !== null && !isCounter(view!.fence);
      return {
        key,
        kind: 'lock',
        holder: displayText(view!.value!),
        token: tokenOf(view!),
        ttlMs: null,
        // -1: set without an expiry: held until someone deletes it.
        remainingMs: view!.pttl >= 0 ? view!.pttl : null,
        candidates: [],
        ...(fenceGarbage ? { detail: { fence: `the fence counter holds "${displayText(view!.fence!, 40)}", not a number` } } : {}),
      };
    }
    // Redlock: held when a majority of *all* instances hold the same value.
    const byValue = new Map<string, KeyRead[]>();
    for (const view of present) {
      const value = view.value!.toString('latin1');
      byValue.set(value, [...(byValue.get(value) ?? []), view]);
    }
    const [value, holders] = [...byValue].sort((a, b) => b[1].length - a[1].length)[0]!;
    const instancesDetail = instances.map((instance, index) => {
      const view = views[index];
      return {
        instance: instance.label,
        holder: view && view.type === 'string' && view.value ? displayText(view.value, 80) : null,
        answered: view !== undefined,
      };
    });
    const held = holders.length >= quorum;
    const remainings = holders.map((v) => v.pttl).filter((p) => p >= 0);
    const tokens = holders.map(tokenOf).filter((t): t is bigint => t !== null);
    return {
      key,
      kind: 'lock',
      holder: held ? displayText(Buffer.from(value, 'latin1')) : null,
      token: held && tokens.length ? tokens.reduce((a, b) => (a > b ? a : b)) : null,
      ttlMs: null,
      remainingMs: held ? (remainings.length ? Math.min(...remainings) : null) : 0,
      candidates: [],
      detail: { heldOn: holders.length, instances: instancesDetail.length, quorum, perInstance: instancesDetail },
    };
  }

  async function read(keysFor: (redis: Redis, signal: AbortSignal) => Promise<Set<RawKey>>, signal: AbortSignal) {
    const results = await Promise.allSettled(
      instances.map(async (instance) => {
        const keys = await keysFor(instance.redis, signal);
        // A fence beside its lock key is read with the lock: no need to read it as a key too.
        return readInstance(instance.redis, [...keys].filter((raw) => !(raw.endsWith(suffix) && keys.has(raw.slice(0, -suffix.length)))));
      }),
    );
    results.forEach((result, index) => {
      instances[index]!.lastError = result.status === 'rejected' ? problemOf(instances[index]!, result.reason) : null;
    });
    const answered = results.filter((r) => r.status === 'fulfilled').length;
    if (answered < quorum) {
      const firstError = instances.find((i) => i.lastError)?.lastError ?? 'no answer';
      throw new SourceUnavailableError(
        config.name,
        redlock ? `only ${answered} of ${instances.length} instances answered (${quorum} needed): ${firstError}` : firstError,
      );
    }
    const perInstance = results.map((r) => (r.status === 'fulfilled' ? r.value : null));
    const allKeys = new Set<RawKey>();
    for (const reads of perInstance) for (const key of reads?.keys() ?? []) allKeys.add(key);
    const observations: Observation[] = [];
    for (const raw of allKeys) {
      const observation = observe(
        raw,
        perInstance.map((reads) => (reads ? (reads.get(raw) ?? { type: 'none', value: null, pttl: -2, fence: null }) : undefined)),
        allKeys,
      );
      if (observation) observations.push(observation);
    }
    return observations;
  }

  function status(): SourceStatusDetail {
    return {
      mode: redlock ? 'redlock' : 'single',
      quorum: redlock ? quorum : undefined,
      instances: instances.map((i) => ({ instance: i.label, up: i.lastError === null, error: i.lastError, keyspaceNotifications: i.notifications })),
    };
  }

  /** Whether keyspace events reach us for keys (K) on set, expire, del and expiry; turns them on when asked. */
  async function notificationsOn(redis: Redis): Promise<boolean> {
    if (config.keyspaceNotifications === 'off') return false;
    let flags = '';
    try {
      const reply = (await redis.config('GET', 'notify-keyspace-events')) as string[];
      flags = reply[1] ?? '';
    } catch {
      return false; // CONFIG is disabled on many managed servers: poll only
    }
    const has = (f: string) => flags.includes(f) || (flags.includes('A') && 'g$lshzxet'.includes(f));
    const enough = flags.includes('K') && has('g') && has('$') && has('x');
    if (enough || config.keyspaceNotifications !== 'enable') return enough;
    try {
      await redis.config('SET', 'notify-keyspace-events', `${flags}Kg$x`);
      return true;
    } catch {
      return false;
    }
  }

  // While every instance's keyspace notifications are live, a poll only checks that the
  // instances answer: changes (renewals included: PEXPIRE is an 'expire' event) come pushed.
  let live = 0;
  let lastFullAt = -Infinity;

  async function snapshot(signal: AbortSignal): Promise<SourceSnapshot> {
    try {
      const observations = await read(scanInstance, signal);
      lastFullAt = performance.now();
      return { observations, status: status() };
    } catch (error) {
      if (error instanceof SourceUnavailableError) throw error;
      throw new SourceUnavailableError(config.name, redactUrlPassword((error as Error).message), { cause: error });
    }
  }

  return {
    name: config.name,
    backend: 'redis',
    pollMs: config.pollMs ?? defaultPollMs,
    snapshot,

    async poll(signal): Promise<PollResult> {
      if (live < instances.length || performance.now() - lastFullAt >= Math.max(RECONCILE_EVERY_MS, 10 * (config.pollMs ?? defaultPollMs))) {
        return { kind: 'full', ...(await snapshot(signal)) };
      }
      const pings = await Promise.allSettled(instances.map((i) => i.redis.ping()));
      pings.forEach((p, index) => {
        instances[index]!.lastError = p.status === 'rejected' ? problemOf(instances[index]!, p.reason) : null;
      });
      if (pings.filter((p) => p.status === 'fulfilled').length < quorum) return { kind: 'full', ...(await snapshot(signal)) };
      return { kind: 'partial', covered: [], observations: [] };
    },

    async readKeys(keys, signal) {
      const wanted = new Set(keys);
      try {
        return { covered: keys.map((raw) => displayText(toBuffer(raw))), observations: await read(async () => wanted, signal) };
      } catch (error) {
        if (error instanceof SourceUnavailableError) throw error;
        throw new SourceUnavailableError(config.name, redactUrlPassword((error as Error).message), { cause: error });
      }
    },

    async watch(onHint: (hint: ChangeHint) => void, signal: AbortSignal) {
      const subscribers: Redis[] = [];
      for (const instance of instances) {
        if (!(await notificationsOn(instance.redis).catch(() => false))) continue;
        instance.notifications = true;
        const prefix = `__keyspace@${dbOf(instance.url)}__:`;
        const subscriber = instance.redis.duplicate();
        subscriber.on('error', () => {});
        // While the subscription is down, changes are missed: polls read everything again.
        let counted = false;
        let connections = 0;
        subscriber.on('ready', () => {
          if (!counted) live++;
          counted = true;
          // Back after a drop: what changed meanwhile was not announced; read everything.
          if (connections++ > 0) lastFullAt = -Infinity;
        });
        subscriber.on('close', () => {
          if (counted) live--;
          counted = false;
        });
        subscriber.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer) => {
          let raw = channel.subarray(prefix.length).toString('latin1');
          if (raw.endsWith(suffix)) raw = raw.slice(0, -suffix.length);
          onHint({ keys: [raw] });
        });
        await subscriber.psubscribe(...config.match.map((pattern) => `${prefix}${pattern}`)).catch(() => {
          instance.notifications = false;
        });
        subscribers.push(subscriber);
      }
      if (subscribers.length === 0) return;
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      for (const subscriber of subscribers) subscriber.disconnect();
    },

    async close() {
      await Promise.all(instances.map((i) => i.redis.quit().catch(() => i.redis.disconnect())));
    },
  };
}
