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
// binary, huge or of another type, they are shown escaped and never crash the read. A value
// longer than a kilobyte is never sent whole: Redis sends its first bytes, its length and its
// SHA-1, which are what the holder's exact text is made of (lib/domain/display.ts).
//
// Every command has a deadline (COMMAND_TIMEOUT_MS), so a server that stops answering (a
// SIGSTOPped process still accepts connections) fails the read instead of holding it.
import Redis from 'ioredis';
import type { RedisSourceConfig } from '../../config';
import { redactUrlPassword } from '../../config';
import { displayText, EXACT_TEXT_HEAD_BYTES, EXACT_TEXT_MAX_BYTES } from '../../domain/display';
import { unreadableObservation, type Observation } from '../../domain/observe';
import { connectionProblem, SourceUnavailableError } from '../errors';
import { exactOf, exactOfHead } from '../exact';
import { RECONCILE_EVERY_MS, type ChangeHint, type LeaseSource, type PollResult, type SourceSnapshot, type SourceStatusDetail } from '../types';

const CONNECT_TIMEOUT_MS = 3_000;
/** A command not answered within this fails (and the read with it). */
const COMMAND_TIMEOUT_MS = 3_000;
const SCAN_COUNT = 1_000;
const READ_BATCH = 500;
/** A fence counter is an INCR counter: at most 20 digits. Anything longer is not one. */
const FENCE_MAX_BYTES = 24;

// For each key, seven entries in one flat list (cheaper to decode than nested ones): its
// type; its value when it is a string of at most ARGV[3] bytes, else its first ARGV[2] bytes;
// its length; the SHA-1 of a longer value; its PTTL; its fence's first bytes and length.
const READ_KEYS = `
local out = {}
local n = 0
local head = tonumber(ARGV[2])
local whole = tonumber(ARGV[3])
local fenceMax = tonumber(ARGV[4])
for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k)['ok']
  local v = false
  local len = 0
  local digest = false
  if t == 'string' then
    len = redis.call('STRLEN', k)
    if len <= whole then
      v = redis.call('GET', k)
    else
      v = redis.call('GETRANGE', k, 0, head - 1)
      digest = redis.sha1hex(redis.call('GET', k))
    end
  end
  local f = false
  local flen = 0
  local fk = k .. ARGV[1]
  if redis.call('TYPE', fk)['ok'] == 'string' then
    flen = redis.call('STRLEN', fk)
    f = redis.call('GETRANGE', fk, 0, fenceMax - 1)
  end
  out[n + 1] = t
  out[n + 2] = v
  out[n + 3] = len
  out[n + 4] = digest
  out[n + 5] = redis.call('PTTL', k)
  out[n + 6] = f
  out[n + 7] = flen
  n = n + 7
end
return out`;
const FIELDS = 7;

type RawKey = string; // the key's bytes as a latin1 string: exact, and usable as a Map key and an argument
/** What one instance said of one key. `head`: the value, or its first bytes when `length` is more. */
type KeyRead = { type: string; head: Buffer | null; length: number; digest: string | null; pttl: number; fence: Buffer | null; fenceLength: number };
type ReaderRedis = Redis & { readKeysBuffer(...args: (string | Buffer | number)[]): Promise<(Buffer | number | null)[]> };
const ABSENT: KeyRead = { type: 'none', head: null, length: 0, digest: null, pttl: -2, fence: null, fenceLength: 0 };

const toBuffer = (raw: RawKey) => Buffer.from(raw, 'latin1');
/** A key as a command argument: ASCII as a string (one write), anything else as its exact bytes. */
// eslint-disable-next-line no-control-regex -- ASCII is the point
const toArgument = (raw: RawKey) => (/^[\x00-\x7f]*$/.test(raw) ? raw : toBuffer(raw));
const PLAIN_ASCII = /^[\x20-\x5b\x5d-\x7e]*$/;
/** A key's exact text: its identity (most keys are plain ASCII and are their own text). */
const keyOf = (raw: RawKey) => (raw.length <= EXACT_TEXT_MAX_BYTES && PLAIN_ASCII.test(raw) ? raw : exactOf(toBuffer(raw)));
const isCounter = (value: Buffer | null, length: number) => value !== null && length <= 20 && value.length === length && /^\d+$/.test(value.toString('latin1'));
/** The holder: the exact text of the value (lib/domain/display.ts), from Redis's head, length and SHA-1. */
const holderOf = (view: KeyRead) => exactOfHead(view.head!, view.length, view.digest ? `sha1:${view.digest.slice(0, 32)}` : null);

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
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      socketTimeout: COMMAND_TIMEOUT_MS,
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
      const flat = await redis.readKeysBuffer(batch.length, ...batch.map(toArgument), suffix, EXACT_TEXT_HEAD_BYTES, EXACT_TEXT_MAX_BYTES, FENCE_MAX_BYTES);
      for (let index = 0; index < batch.length; index++) {
        const at = index * FIELDS;
        const digest = flat[at + 3] as Buffer | null;
        reads.set(batch[index]!, {
          type: String(flat[at]),
          head: flat[at + 1] as Buffer | null,
          length: Number(flat[at + 2]),
          digest: digest === null ? null : digest.toString('latin1'),
          pttl: Number(flat[at + 4]),
          fence: flat[at + 5] as Buffer | null,
          fenceLength: Number(flat[at + 6]),
        });
      }
    }
    return reads;
  }

  /** One key's observation from what each instance said about it (one entry per answering instance). */
  function observe(raw: RawKey, views: (KeyRead | undefined)[], allKeys: Set<RawKey>): Observation | null {
    const present = views.filter((v): v is KeyRead => v !== undefined && v.type !== 'none');
    if (present.length === 0) return null;
    // A fence is not a lease of its own: a counter named like one, or anything beside its lock key.
    if (raw.endsWith(suffix) && (allKeys.has(raw.slice(0, -suffix.length)) || present.every((v) => v.type === 'string' && isCounter(v.head, v.length)))) {
      return null;
    }
    const key = keyOf(raw);
    const wrongType = present.find((v) => v.type !== 'string');
    if (wrongType) {
      return unreadableObservation(key, `the key holds a ${displayText(wrongType.type, 20)}, not a string: it is not a lock this source can read`);
    }
    const tokenOf = (v: KeyRead) => (isCounter(v.fence, v.fenceLength) ? BigInt(v.fence!.toString('latin1')) : null);
    const fenceProblem = (v: KeyRead) =>
      v.fence !== null && !isCounter(v.fence, v.fenceLength)
        ? `the fence counter holds "${displayText(v.fence, 20)}"${v.fenceLength > v.fence.length ? ` (${v.fenceLength} bytes)` : ''}, not a number`
        : null;
    if (!redlock) {
      const [view] = present;
      const fenceGarbage = fenceProblem(view!);
      return {
        key,
        kind: 'lock',
        holder: holderOf(view!),
        token: tokenOf(view!),
        ttlMs: null,
        // -1: set without an expiry: held until someone deletes it.
        remainingMs: view!.pttl >= 0 ? view!.pttl : null,
        candidates: [],
        ...(fenceGarbage ? { detail: { fence: fenceGarbage } } : {}),
      };
    }
    // Redlock: held when a majority of *all* instances hold the same value. An instance that
    // did not answer is unknown: it counts neither for nor against a holder.
    const byValue = new Map<string, KeyRead[]>();
    for (const view of present) {
      const value = holderOf(view);
      byValue.set(value, [...(byValue.get(value) ?? []), view]);
    }
    const [value, holders] = [...byValue].sort((a, b) => b[1].length - a[1].length)[0]!;
    const instancesDetail = instances.map((instance, index) => {
      const view = views[index];
      return {
        instance: instance.label,
        holder: view && view.type === 'string' && view.head ? displayText(view.head, 80) : null,
        answered: view !== undefined,
      };
    });
    const held = holders.length >= quorum;
    const unanswered = instancesDetail.filter((i) => !i.answered).length;
    if (!held && holders.length + unanswered >= quorum) {
      // The instances that did not answer could make a majority with those that hold it: held
      // or not, nobody can tell until they answer. Unknown, never free.
      return unreadableObservation(key, `held on ${holders.length} of ${instances.length} instances, ${unanswered} did not answer: a quorum of ${quorum} cannot be judged`, {
        kind: 'lock',
        detail: { heldOn: holders.length, instances: instancesDetail.length, quorum, perInstance: instancesDetail },
      });
    }
    const remainings = holders.map((v) => v.pttl).filter((p) => p >= 0);
    const tokens = holders.map(tokenOf).filter((t): t is bigint => t !== null);
    return {
      key,
      kind: 'lock',
      holder: held ? value : null,
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
        perInstance.map((reads) => (reads ? (reads.get(raw) ?? ABSENT) : undefined)),
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
  // A poll may rely on the push stream only after a full read that *started* once every
  // subscription was confirmed (liveSince): a change made before that read's SCAN is in it, one
  // made after the subscription is announced. (As the etcd source does with its watch.)
  let live = 0;
  let liveSince = Infinity;
  let lastFullAt = -Infinity;

  async function snapshot(signal: AbortSignal): Promise<SourceSnapshot> {
    try {
      const startedAt = performance.now();
      const observations = await read(scanInstance, signal);
      lastFullAt = startedAt;
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
      if (live < instances.length || lastFullAt < liveSince || performance.now() - lastFullAt >= Math.max(RECONCILE_EVERY_MS, 10 * (config.pollMs ?? defaultPollMs))) {
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
        return { covered: keys.map(keyOf), observations: await read(async () => wanted, signal) };
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
        // Subscribed by hand at every connection (not by ioredis's resubscription, which says
        // nothing when it is done): the instance counts as live from the confirmation on.
        const subscriber = instance.redis.duplicate({ autoResubscribe: false });
        subscriber.on('error', () => {});
        let counted = false;
        const subscribe = async () => {
          try {
            await subscriber.psubscribe(...config.match.map((pattern) => `${prefix}${pattern}`));
          } catch {
            instance.notifications = false;
            return;
          }
          instance.notifications = true;
          if (!counted) live++;
          counted = true;
          // What changed before the subscription was not announced: read everything again.
          liveSince = performance.now();
        };
        subscriber.on('ready', () => void subscribe());
        // While the subscription is down, changes are missed: polls read everything again.
        subscriber.on('close', () => {
          if (counted) live--;
          counted = false;
        });
        subscriber.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer) => {
          let raw = channel.subarray(prefix.length).toString('latin1');
          if (raw.endsWith(suffix)) raw = raw.slice(0, -suffix.length);
          onHint({ keys: [raw] });
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
