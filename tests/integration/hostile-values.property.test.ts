// Issue 13: a property-based suite over backend values. For each backend, fast-check makes a
// hostile data set (keys of binary bytes, control and bidi characters, 10 kB names that share
// long prefixes, values up to 2 MB, TTLs up to 2^62 ms, fence counters beyond 2^63, tokens of
// 1.5 or 10^70, expiries in 4000 BC or 200000 AD, keys of other types...) and writes it into
// the REAL server under a fresh prefix or table; the real collector observes it into a real
// store (PostgreSQL for most runs, the embedded PGlite for a few), and each run checks:
//
// - no frozen source: a tidy canary lease written after the hostile data shows in the store
//   within CANARY_BOUND_MS, every read succeeded, and the source's row is `up`;
// - no invented event: nothing changes while it is observed, so the only events are first
//   sightings (`acquired` with detail.firstSeen), and two keys never become one lease (as many
//   lease ids as keys that are leases: keys differing only after 200 characters, after 1 kB,
//   or in an invisible character are different leases); different values are different holders;
// - nothing crashes the read path (no 5xx): every stored lease converts to the API's view
//   (lib/queries/leases.ts listLeases, getLease, listLeaseEvents; lib/queries/lease-cache.ts;
//   the live bus's messages; sources and metrics), serializes as JSON, with times as ISO
//   strings of the years 1 to 9999, tokens as decimal strings, and ids the API can address;
// - no secret in any output: each source's config carries a password the server accepts (a
//   Redis ACL user made for this file, a private etcd with authentication on, a PostgreSQL URL
//   whose password the test cluster's trust authentication accepts); it appears in none of the
//   collector's log lines, the source's row, the lease and event rows, the views and the bus.
//
// LEASEHOLD_PROPERTY_RUNS=<n> changes the number of runs per property (default 10 on the
// PostgreSQL store, 3 on PGlite); LEASEHOLD_PROPERTY_SEED=<seed> replays a failure (fast-check
// prints the seed); LEASEHOLD_PROPERTY_TIME_MS bounds a property with its shrinking (150 s);
// LEASEHOLD_PROPERTY_DEBUG=1 prints what each run wrote.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import fc from 'fast-check';
import Redis from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCollector } from '../../lib/collector';
import type { BusMessage } from '../../lib/live/bus';
import { testRoot } from '../support/root';
import type { ReadReport } from '../../lib/collector/observe-source';
import type { Config, SourceConfig } from '../../lib/config';
import { openStore, type Store } from '../../lib/db/store';
import { listSources } from '../../lib/queries/console';
import { leaseListJson } from '../../lib/queries/lease-cache';
import { getLease, listFailovers, listLeaseEvents, listLeases } from '../../lib/queries/leases';
import { storeMetrics } from '../../lib/queries/metrics';
import { createPgliteDatabase, createPostgresDatabase, type TestDatabase } from '../support/databases';
import { testServices } from '../support/services';

const services = testServices();
const POLL_MS = 200;
/** A canary written after the hostile data must be in the store within this: a few polls, with room for a loaded machine. */
const CANARY_BOUND_MS = 4_000;
/** The first read of a fresh source (ownership of the source taken first, on a PostgreSQL store). */
const FIRST_READ_MS = 8_000;
const RUNS = Number(process.env.LEASEHOLD_PROPERTY_RUNS) || 0;
/** LEASEHOLD_PROPERTY_DEBUG=1: one line per run saying what it wrote and how long it took. */
const DEBUG = process.env.LEASEHOLD_PROPERTY_DEBUG === '1';
const SEED = process.env.LEASEHOLD_PROPERTY_SEED ? Number(process.env.LEASEHOLD_PROPERTY_SEED) : undefined;
const runsOn = (kind: 'postgres' | 'pglite') => RUNS || (kind === 'postgres' ? 10 : 3);
/** Shrinking runs against real servers: it stops after this, with the smallest counterexample found by then. */
const PROPERTY_TIME_MS = Number(process.env.LEASEHOLD_PROPERTY_TIME_MS) || 150_000;
const TEST_TIMEOUT_MS = 240_000;

const hex = (bytes = 4) => randomBytes(bytes).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CANARY_HOLDER = 'canary-holder';

// ------------------------------------------------------------------------------ generators

/** Characters that trip displays, escapes, terminals and JSON: bidi overrides, invisible ones, C0/C1 controls, the escape's own backslash and marker. */
const HOSTILE_CHARS = [
  '\u202e', '\u202d', '\u2066', '\u2069', '\u200b', '\u200d', '\u200e', '\ufeff', '\u00ad', '\u061c', '\u180e', '\u2028', '\u2060',
  '\x01', '\x1b', '\x7f', '\x85', '\x9b', '\t', '\n', '\r', '\\', '…', '"', "'", '/', '%', '*', '?', '[', ']', ' ', 'é', 'e\u0301', '😀', '𝕏', '中', '\ufffd',
];
const codePoint = fc
  .integer({ min: 1, max: 0x10ffff })
  .filter((code) => code < 0xd800 || code > 0xdfff)
  .map((code) => String.fromCodePoint(code));
const char = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_CHARS) },
  { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'x', '0', '1', '-', ':') },
  { weight: 2, arbitrary: codePoint },
);
const shortText = fc.array(char, { maxLength: 24 }).map((chars) => chars.join(''));
/** Text that reads like an escape: the literal text "\x01" is not the byte 0x01, "…[12 bytes, sha1:…]" is not a digest. */
const lookalike = fc
  .array(fc.constantFrom('\\', 'x', 'u', '0', '1', '2', 'e', 'f', '\x01', '\u202e', '…', '[', ']', ' bytes, sha1:', ' bytes, sha256:'), { maxLength: 12 })
  .map((parts) => parts.join(''));
/** Up to 10 kB of one character, then a short tail. */
const longText = fc.record({ fill: char, bytes: fc.integer({ min: 0, max: 10_240 }), tail: shortText }).map(({ fill, bytes, tail }) =>
  fill.repeat(Math.floor(bytes / Buffer.byteLength(fill))) + tail,
);
const text = fc.oneof({ weight: 5, arbitrary: shortText }, { weight: 2, arbitrary: lookalike }, { weight: 1, arbitrary: longText });
/** A long prefix shared by some keys of a data set: they differ only after 200 characters, or after 1 kB. */
const sharedPrefix = fc.oneof(
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.record({ fill: fc.constantFrom('p', 'é', '\u202e', '😀'), chars: fc.constantFrom(199, 200, 201, 1_023, 1_024, 1_100, 5_000) }).map(({ fill, chars }) => fill.repeat(chars)) },
);
/** What tells a twin from its original: one invisible or direction-changing character, or a byte. */
const twinMark = fc.constantFrom('\u202e', '\u200b', '\ufeff', '\u00ad', '\u2060', ' ', '\\', 'x');

const utf8 = (value: string) => Buffer.from(value, 'utf8');
/** Bytes that are not UTF-8: a lone continuation, an overlong NUL, an encoded surrogate, a cut sequence, beyond U+10FFFF, NUL. */
const invalidUtf8 = fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0x00]).map((b) => Buffer.from(b));
const binaryKeyBody = fc.oneof(
  { weight: 4, arbitrary: text.map(utf8) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b)) },
  { weight: 2, arbitrary: fc.array(fc.oneof(text.map(utf8), invalidUtf8), { maxLength: 4 }).map((parts) => Buffer.concat(parts)) },
);

/** A value: bytes, or a large one described (made when written): `length` bytes of `fill` ending in `tail`. */
type ValueSpec = { small: Buffer } | { length: number; fill: number; tail: Buffer };
const valueSpec = (maxBytes: number): fc.Arbitrary<ValueSpec> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.oneof(binaryKeyBody, fc.constant(Buffer.alloc(0))).map((small) => ({ small })) },
    {
      weight: 1,
      arbitrary: fc.record({
        length: fc.oneof(fc.integer({ min: 1_025, max: 4_096 }), fc.integer({ min: 4_097, max: maxBytes })),
        fill: fc.integer({ min: 0, max: 255 }),
        tail: fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b)),
      }),
    },
  );
const valueOf = (spec: ValueSpec): Buffer => ('small' in spec ? spec.small : Buffer.concat([Buffer.alloc(spec.length - spec.tail.length, spec.fill), spec.tail]));
/** The same value but for its last byte: a holder that differs from another only at its very end. */
const lastByteFlipped = (spec: ValueSpec): ValueSpec => {
  const value = valueOf(spec);
  if (value.length === 0) return { small: Buffer.from([0x21]) };
  if ('small' in spec) return { small: Buffer.concat([value.subarray(0, -1), Buffer.from([value[value.length - 1]! ^ 1])]) };
  return { ...spec, tail: Buffer.concat([spec.tail.subarray(0, -1), Buffer.from([spec.tail[spec.tail.length - 1]! ^ 1])]) };
};

// ------------------------------------------------------------------------------ shared state

let storeDb: TestDatabase & { url: string };
let pgliteDb: TestDatabase & { dataDir: string };
let observedDb: TestDatabase & { url: string };
const stores: Partial<Record<'postgres' | 'pglite', Store>> = {};
// The composition root these runs serve from (lib/root): its bus carries the collectors' messages to the cached lease list.
const root = testRoot();
let redisAdmin: Redis;
const REDIS_USER = `lh_hostile_${hex()}`;
const REDIS_PASSWORD = `h0st!le ${hex()}@pw`;
let redisObserverUrl: string;
const ETCD_PASSWORD = `etcd h0st!le ${hex()}`;
let etcdServer: { endpoint: string; stop(): Promise<void> };
let etcdAdmin: Etcd3;
/** The PostgreSQL URL the observer uses, and its password when the server shows it accepts any (trust authentication). */
let pgObserverUrl: string;
let pgSecret: string | null = null;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A private single-member etcd with authentication on (root's password is the secret): the shared test etcd has none, and turning it on there would break other tests. */
async function startAuthEtcd(): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-etcd-auth-'));
  const [client, peer] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${client}`;
  const child: ChildProcess = spawn(
    'etcd',
    [
      '--name', 'h1', '--data-dir', path.join(dir, 'data'), '--logger=zap', '--log-level=error',
      '--listen-client-urls', endpoint, '--advertise-client-urls', endpoint,
      '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-cluster', `h1=http://127.0.0.1:${peer}`, '--initial-cluster-state', 'new', '--initial-cluster-token', `lh-hostile-${hex()}`,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  let up = false;
  for (let i = 0; i < 200 && !up; i++) {
    up = await fetch(`${endpoint}/health`).then((r) => r.ok, () => false);
    if (!up) await sleep(100);
  }
  if (!up) {
    await stop();
    throw new Error(`the private etcd on ${endpoint} did not start`);
  }
  for (const args of [['user', 'add', 'root', `--new-user-password=${ETCD_PASSWORD}`], ['auth', 'enable']]) {
    const result = spawnSync('etcdctl', ['--endpoints', endpoint, ...args], { env: { ...process.env, ETCDCTL_API: '3' }, encoding: 'utf8' });
    if (result.status !== 0) {
      await stop();
      throw new Error(`etcdctl ${args[0]} ${args[1]} failed: ${result.stderr}`);
    }
  }
  return { endpoint, stop };
}

beforeAll(async () => {
  [storeDb, observedDb, pgliteDb] = await Promise.all([createPostgresDatabase('lh_hostile_prop_store'), createPostgresDatabase('lh_hostile_prop'), createPgliteDatabase()]);
  stores.postgres = await openStore({ kind: 'postgres', url: storeDb.url });
  stores.pglite = await openStore(pgliteDb.storeConfig());

  redisAdmin = new Redis(services.redisUrl);
  await redisAdmin.acl('SETUSER', REDIS_USER, 'on', `>${REDIS_PASSWORD}`, '~*', '&*', '+@all');
  const redisUrl = new URL(services.redisUrl);
  redisObserverUrl = `redis://${REDIS_USER}:${encodeURIComponent(REDIS_PASSWORD)}@${redisUrl.host}/0`;

  // A password the server accepts: the test cluster authenticates loopback connections by
  // trust (scripts/services.sh makes its own role for clusters that do not); without trust,
  // the role's own password is used and the PostgreSQL runs cannot check for it.
  const candidate = `pg h0st!le ${hex()}`;
  const withSecret = new URL(observedDb.url);
  withSecret.password = encodeURIComponent(candidate);
  const probe = new pg.Client({ connectionString: withSecret.toString() });
  try {
    await probe.connect();
    await probe.query('SELECT 1');
    pgObserverUrl = withSecret.toString();
    pgSecret = candidate;
  } catch {
    pgObserverUrl = observedDb.url;
    console.warn('[hostile-values] the PostgreSQL test server refuses an arbitrary password: the PostgreSQL runs do not check for a leaked one');
  } finally {
    await probe.end().catch(() => {});
  }

  etcdServer = await startAuthEtcd();
  etcdAdmin = new Etcd3({ hosts: [etcdServer.endpoint], auth: { username: 'root', password: ETCD_PASSWORD } });
}, 120_000);

afterAll(async () => {
  await root.close(); // its relay and caches (the stores are closed below)
  await redisAdmin?.acl('DELUSER', REDIS_USER).catch(() => {});
  redisAdmin?.disconnect();
  etcdAdmin?.close();
  await etcdServer?.stop();
  await stores.postgres?.close();
  await stores.pglite?.close();
  await Promise.allSettled([storeDb?.drop(), observedDb?.drop(), pgliteDb?.drop()]);
}, 120_000);

// ------------------------------------------------------------------------------ one observation

/** The collector's read reports, and a way to wait for the next ones without fixed sleeps. */
class ReadLog {
  readonly reports: ReadReport[] = [];
  private wake: (() => void)[] = [];
  readonly push = (report: ReadReport) => {
    this.reports.push(report);
    for (const wake of this.wake.splice(0)) wake();
  };
  /** Resolves true once `done()` holds (checked after every read), false after `timeoutMs`. */
  async until(done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await done()) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

type Expected = {
  /** How many leases the source shows: one per distinct key that is a lease (the canary included). */
  leases: number;
  /** The canary's lease id, holder and token. */
  canary: { id: string; token: string | null };
  /**
   * How many different non-empty holders the leases show (values that differ give holders
   * that differ), when it can be told. An empty value is left out: whether it is a holder
   * named "" or nobody is a choice of the adapter, not a matter of identity.
   */
  holders?: number;
  /** What the run wrote, in a few words (LEASEHOLD_PROPERTY_DEBUG). */
  summary: string;
};

type Observed = { logs: string[]; reads: ReadReport[]; bus: BusMessage[]; canaryMs: number; sourceRow: unknown };

/**
 * Observes one source with a fresh collector: waits for its first read, writes what comes
 * late (pushed or polled) and the canary, waits for the canary and every expected lease, and
 * a few more reads of data that does not change; then stops the collector and checks.
 */
async function observe(
  storeKind: 'postgres' | 'pglite',
  source: SourceConfig,
  expected: Expected,
  writes: { late(): Promise<void>; canary(): Promise<void> },
  secrets: string[],
): Promise<void> {
  const store = stores[storeKind]!;
  const config = {
    sources: [source],
    pollMs: POLL_MS,
    retention: { rollupDays: 30, eventDays: 90, renewalSamplesPerLease: 120 },
    file: null,
    demo: false,
    store: store.url === null ? { kind: 'pglite', dataDir: pgliteDb.dataDir } : { kind: 'postgres', url: store.url },
    host: '127.0.0.1',
    port: 0,
    collectorLeaseTtlMs: 10_000,
    allowedHosts: null,
  } as Config;
  const logs: string[] = [];
  const reads = new ReadLog();
  const bus: BusMessage[] = [];
  const mine = (message: BusMessage) =>
    message.type === 'lease' ? message.lease.source === source.name : message.type === 'event' ? message.event.leaseId.startsWith(`${source.name}/`) : message.source.name === source.name;
  const { unsubscribe } = root.bus.subscribe((message) => {
    if (mine(message)) bus.push(message);
  });
  const collector = startCollector({ store, config, bus: root.bus, log: (line) => logs.push(line), onRead: reads.push });
  const leaseCount = () => store.prisma.lease.count({ where: { sourceName: source.name } });
  const context = async () =>
    `\nsource row: ${json(await store.prisma.source.findUnique({ where: { name: source.name } }))}\nreads: ${json(reads.reports.slice(-5))}\nlog:\n  ${logs.slice(-10).join('\n  ')}`;
  let canaryMs = Infinity;
  let sourceRow: unknown;
  try {
    // 1. The first read, of the hostile data written before the collector started.
    const firstRead = await reads.until(() => reads.reports.some((r) => r.kind === 'full'), FIRST_READ_MS);
    expect(firstRead && reads.reports.find((r) => r.kind === 'full')!.ok, `no good read of the hostile data${firstRead ? '' : ` within ${FIRST_READ_MS} ms`}${await context()}`).toBe(true);
    // 2. What comes while it watches: pushed (keyspace notifications, etcd watch) or found by the next poll.
    await writes.late();
    // 3. The canary: a tidy lease, written last. A source frozen on one bad item never shows it.
    const canaryWritten = performance.now();
    await writes.canary();
    const canarySeen = await reads.until(async () => (await store.prisma.lease.findUnique({ where: { id: expected.canary.id } }))?.holder === CANARY_HOLDER, CANARY_BOUND_MS);
    canaryMs = performance.now() - canaryWritten;
    expect(canarySeen, `the canary ${expected.canary.id} was not in the store ${CANARY_BOUND_MS} ms after it was written: the source froze${await context()}`).toBe(true);
    // 4. Every lease (check() says which are missing), then a few more reads of the same data:
    // none of them may invent anything.
    await reads.until(async () => (await leaseCount()) >= expected.leases, CANARY_BOUND_MS);
    // (Polled sources read everything each time; pushed ones poll lightly between full reads.)
    const seen = reads.reports.length;
    await reads.until(() => reads.reports.length >= seen + 3, 3_000);
    sourceRow = await store.prisma.source.findUnique({ where: { name: source.name } });
    expect((sourceRow as { status?: string } | null)?.status, `the source is not up after the hostile data${await context()}`).toBe('up');
  } finally {
    await collector.stop();
    unsubscribe();
  }
  await check(store, config, source.name, expected, { logs, reads: reads.reports, bus, canaryMs, sourceRow }, secrets);
}

/** JSON of store rows and views: BigInt as text. */
const json = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DECIMAL = /^-?\d+$/;
// eslint-disable-next-line no-control-regex -- the point: what the API refuses in a lease id
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** lib/api/params.ts MAX_LEASE_ID_CHARS: a longer id cannot be asked for. */
const MAX_ID_CHARS = 8_192;

function expectTime(value: unknown, what: string) {
  if (value === null) return;
  expect(typeof value === 'string' && ISO.test(value) && Number.isFinite(Date.parse(value)), `${what} is not an ISO time of the years 1-9999: ${json(value)}`).toBe(true);
}
function expectToken(value: unknown, what: string) {
  if (value === null) return;
  expect(typeof value === 'string' && DECIMAL.test(value), `${what} is not a decimal string: ${json(value)}`).toBe(true);
}
function expectDuration(value: unknown, what: string) {
  if (value === null) return;
  expect(typeof value === 'number' && Number.isSafeInteger(value), `${what} is not a whole number of ms: ${json(value)}`).toBe(true);
}
function expectView(view: Record<string, unknown>, what: string) {
  for (const field of ['acquiredAt', 'renewedAt', 'expiresAt', 'observedAt']) expectTime(view[field], `${what}.${field}`);
  expectToken(view.token, `${what}.token`);
  for (const field of ['ttlMs', 'remainingMs', 'lastIntervalMs', 'lastMarginMs']) expectDuration(view[field], `${what}.${field}`);
  if (typeof view.remainingMs === 'number') expect(view.remainingMs, `${what}.remainingMs`).toBeGreaterThanOrEqual(0);
  for (const [i, candidate] of ((view.candidates as { token: unknown }[] | undefined) ?? []).entries()) expectToken(candidate.token, `${what}.candidates[${i}].token`);
  const id = view.id as string;
  expect(CONTROL.test(id) || id.length > MAX_ID_CHARS, `${what}: the API cannot address the lease id ${json(id.slice(0, 300))} (${id.length} characters)`).toBe(false);
}
function expectEventView(view: Record<string, unknown>, what: string) {
  expectTime(view.at, `${what}.at`);
  expectToken(view.token, `${what}.token`);
  expectToken(view.previousToken, `${what}.previousToken`);
  expectDuration(view.gapMs, `${what}.gapMs`);
}

/** Every form a secret could be printed in: as it is, percent-encoded (either case), JSON-escaped. */
function formsOf(secret: string): string[] {
  const encoded = encodeURIComponent(secret);
  return [...new Set([secret, encoded, encoded.toLowerCase(), encoded.replace(/%20/g, '+'), JSON.stringify(secret).slice(1, -1)])];
}

async function check(store: Store, config: Config, name: string, expected: Expected, observed: Observed, secrets: string[]) {
  const { logs, reads, bus } = observed;
  if (DEBUG) console.log(`[hostile-values] ${expected.summary}; canary after ${Math.round(observed.canaryMs)} ms, ${reads.length} reads`);
  const outputs: [string, string][] = [['collector log', logs.join('\n')]];

  // No frozen source: every read succeeded, and it never went down.
  const failed = reads.filter((r) => !r.ok);
  expect(failed, `reads failed on the hostile data:\n${logs.join('\n')}`).toEqual([]);
  const sourceEvents = await store.prisma.sourceEvent.findMany({ where: { sourceName: name } });
  expect(sourceEvents.map((e) => e.type), 'source events').toEqual([]);
  expect(logs.filter((line) => /observer failed|refused|retrying/.test(line)), 'the collector logged a failure').toEqual([]);
  outputs.push(['source row', json(observed.sourceRow)]);

  // No invented event, and one lease per key.
  const rows = await store.prisma.lease.findMany({ where: { sourceName: name } });
  const events = await store.prisma.leaseEvent.findMany({ where: { leaseId: { in: rows.map((r) => r.id) } }, orderBy: { id: 'asc' } });
  outputs.push(['lease rows', json(rows)], ['event rows', json(events)]);
  const invented = events.filter((e) => e.type !== 'acquired' || (e.detail as { firstSeen?: unknown } | null)?.firstSeen !== true);
  expect(invented.map((e) => ({ lease: e.leaseId.slice(0, 200), type: e.type, detail: e.detail })), 'events other than first sightings on data that did not change').toEqual([]);
  const perLease = new Map<string, number>();
  for (const e of events) perLease.set(e.leaseId, (perLease.get(e.leaseId) ?? 0) + 1);
  expect([...perLease].filter(([, n]) => n > 1).map(([id]) => id.slice(0, 200)), 'leases seen for the first time twice').toEqual([]);
  const ids = new Set(rows.map((r) => r.id));
  expect(ids.size, 'distinct lease ids').toBe(rows.length);
  expect(rows.length, `leases in the store (one per key that is a lease); keys:\n${rows.map((r) => `  ${json(r.key.slice(0, 160))}`).join('\n')}`).toBe(expected.leases);
  const canary = rows.find((r) => r.id === expected.canary.id);
  expect(canary && { state: canary.state, holder: canary.holder, token: canary.token === null ? null : String(canary.token) }, 'the canary').toEqual({ state: 'held', holder: CANARY_HOLDER, token: expected.canary.token });
  if (expected.holders !== undefined) {
    const holders = new Set(rows.map((r) => r.holder ?? r.lastHolder).filter((h) => h !== null && h !== ''));
    expect(holders.size, `distinct holders (different values are different holders); holders:\n${[...holders].map((h) => `  ${json(h!.slice(0, 160))}`).join('\n')}`).toBe(expected.holders);
  }

  // Nothing crashes the read path: every lease as the API shows it, in JSON.
  const list = await listLeases(store, { source: name });
  const listJson = JSON.stringify(list);
  outputs.push(['GET /api/v1/leases (store)', listJson]);
  expect(list.total, 'listLeases total').toBe(expected.leases);
  for (const view of list.leases) expectView(view as unknown as Record<string, unknown>, `listLeases ${view.id.slice(0, 80)}`);
  for (const row of rows) {
    const view = await getLease(store, row.id);
    expect(view, `getLease ${row.id.slice(0, 200)}`).not.toBeNull();
    const text = JSON.stringify(view);
    expectView(JSON.parse(text) as Record<string, unknown>, `getLease ${row.id.slice(0, 80)}`);
    const page = await listLeaseEvents(store, row.id, { limit: 20 });
    const pageJson = JSON.stringify(page);
    for (const event of page.events) expectEventView(event as unknown as Record<string, unknown>, `event of ${row.id.slice(0, 80)}`);
    outputs.push([`GET /api/v1/leases/${row.id.slice(0, 80)}`, text + pageJson]);
  }
  const cached = await leaseListJson(root, store, { source: name });
  const cachedText = cached.json.toString('utf8');
  outputs.push(['GET /api/v1/leases (cache)', cachedText]);
  const cachedLeases = JSON.parse(cachedText) as Record<string, unknown>[];
  expect(cachedLeases.length, 'leases in the cached list').toBe(expected.leases);
  for (const view of cachedLeases) {
    expect(ids.has(view.id as string), `the cached list shows a lease the store does not have: ${json(String(view.id).slice(0, 200))}`).toBe(true);
    expectView(view, `cached ${String(view.id).slice(0, 80)}`);
  }
  const failovers = await listFailovers(store, { limit: 1_000 });
  const failoversJson = JSON.stringify(failovers);
  for (const event of failovers.failovers) expectEventView(event as unknown as Record<string, unknown>, `failover of ${event.leaseId.slice(0, 80)}`);
  expect(failovers.failovers.filter((f) => ids.has(f.leaseId)).map((f) => f.leaseId.slice(0, 200)), 'failovers on data that did not change').toEqual([]);
  outputs.push(['GET /api/v1/failovers', failoversJson]);
  const sources = await listSources(store, config);
  outputs.push(['GET /api/v1/sources', JSON.stringify(sources)]);
  outputs.push(['GET /metrics', (await storeMetrics(store)).join('\n')]);
  // The live stream's messages, as the SSE route sends them.
  expect(bus.length, 'messages on the live bus').toBeGreaterThan(0);
  for (const message of bus) {
    const text = JSON.stringify(message);
    const parsed = JSON.parse(text) as BusMessage;
    if (parsed.type === 'lease') expectView(parsed.lease as unknown as Record<string, unknown>, `bus lease ${parsed.lease.id.slice(0, 80)}`);
    if (parsed.type === 'event') expectEventView(parsed.event as unknown as Record<string, unknown>, `bus event of ${parsed.event.leaseId.slice(0, 80)}`);
    outputs.push(['live bus', text]);
  }

  // No secret in any output.
  for (const secret of secrets) {
    for (const form of formsOf(secret)) {
      for (const [where, output] of outputs) {
        expect(output.includes(form), `the password (as ${json(form)}) is in the ${where}`).toBe(false);
      }
    }
  }
}

/** One property: `runs` data sets of one backend, each observed by a fresh collector on the given store. */
async function property<T>(arbitrary: fc.Arbitrary<T>, storeKind: 'postgres' | 'pglite', run: (data: T) => Promise<void>) {
  const timings: number[] = [];
  await fc.assert(
    fc.asyncProperty(arbitrary, async (data) => {
      const started = performance.now();
      await run(data);
      timings.push(performance.now() - started);
    }),
    { numRuns: runsOn(storeKind), seed: SEED, interruptAfterTimeLimit: PROPERTY_TIME_MS },
  );
  expect(timings.length, 'runs that completed').toBeGreaterThan(0);
}

// ------------------------------------------------------------------------------ Redis

type RedisEntry = {
  body: Buffer;
  shared: boolean;
  type: 'string' | 'hash' | 'list' | 'set' | 'zset';
  value: ValueSpec;
  /** PX in ms, or null for no expiry. */
  ttl: bigint | null;
  fence: { string: Buffer } | { hash: true } | null;
  /** Written after the collector's first read (pushed by keyspace notifications, or polled). */
  late: boolean;
  /** A second key: the same but for this character (and its value but for its last byte). */
  twin: string | null;
};

const FENCES = [
  '0', '1', '007', '9223372036854775807', '9223372036854775808', '18446744073709551616', '99999999999999999999', '100000000000000000000',
  '-1', '-9223372036854775809', '1.5', '1e3', 'abc', '', ' 7', '7 ', '0x10', '\u0661\u0662', '\u202e42',
];
const fenceArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FENCES).map((f) => ({ string: utf8(f) })) },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }).map((n) => ({ string: utf8(n.toString()) })) },
  { weight: 1, arbitrary: binaryKeyBody.map((b) => ({ string: b })) },
  { weight: 1, arbitrary: fc.integer({ min: 25, max: 200_000 }).map((n) => ({ string: Buffer.alloc(n, '9') })) },
  { weight: 1, arbitrary: fc.constant({ hash: true as const }) },
);
const pxArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.bigInt({ min: 10_000n, max: 100_000_000n }) },
  { weight: 2, arbitrary: fc.bigInt({ min: 100_000_000n, max: 2n ** 62n }) },
  { weight: 2, arbitrary: fc.constantFrom(2n ** 31n - 1n, 2n ** 31n, 2n ** 32n, 2n ** 53n + 1n, 864_000_000_000_001n, 2n ** 62n) },
);
const redisEntry: fc.Arbitrary<RedisEntry> = fc.record({
  body: binaryKeyBody,
  shared: fc.boolean(),
  type: fc.oneof({ weight: 6, arbitrary: fc.constant('string' as const) }, { weight: 1, arbitrary: fc.constantFrom('hash' as const, 'list' as const, 'set' as const, 'zset' as const) }),
  value: valueSpec(2_000_000),
  ttl: pxArb,
  fence: fc.option(fenceArb, { nil: null, freq: 2 }),
  late: fc.boolean(),
  twin: fc.option(twinMark, { nil: null, freq: 3 }),
});
const redisData = fc.record({
  shared: sharedPrefix,
  entries: fc.array(redisEntry, { minLength: 1, maxLength: 10 }),
  notifications: fc.constantFrom('off' as const, 'auto' as const),
});
type RedisData = typeof redisData extends fc.Arbitrary<infer T> ? T : never;

const FENCE_SUFFIX = ':fence';

async function redisRun(storeKind: 'postgres' | 'pglite', data: RedisData) {
  const prefix = `hv${hex()}:`;
  const name = `h-redis-${hex()}`;
  // The keys, each once (a twin may repeat another key: the first one is kept).
  const keys = new Map<string, { key: Buffer; entry: RedisEntry; value: ValueSpec }>();
  for (const entry of data.entries) {
    const variants: { body: Buffer; value: ValueSpec }[] = [{ body: entry.body, value: entry.value }];
    if (entry.twin !== null) variants.push({ body: Buffer.concat([entry.body, utf8(entry.twin)]), value: lastByteFlipped(entry.value) });
    for (const { body, value } of variants) {
      let key = Buffer.concat([utf8(prefix), utf8('h'), entry.shared ? utf8(data.shared) : Buffer.alloc(0), body]);
      // A key ending in the fence suffix would be another key's fence.
      if (key.toString('latin1').endsWith(FENCE_SUFFIX)) key = Buffer.concat([key, utf8('~')]);
      if (!keys.has(key.toString('latin1'))) keys.set(key.toString('latin1'), { key, entry, value });
    }
  }
  const canaryKey = `${prefix}canary`;
  const strings = [...keys.values()].filter((k) => k.entry.type === 'string');
  const expected: Expected = {
    leases: keys.size + 1,
    canary: { id: `${name}/${canaryKey}`, token: '1' },
    holders: new Set([...strings.map((k) => valueOf(k.value).toString('latin1')).filter((v) => v !== ''), CANARY_HOLDER]).size,
    summary: (() => {
      const all = [...keys.values()];
      const lengths = all.map((k) => k.key.length);
      const values = strings.map((k) => valueOf(k.value).length);
      return `redis ${storeKind} ${data.notifications}: ${all.length} keys (longest ${Math.max(...lengths)} B, ${all.filter((k) => !isUtf8(k.key)).length} not UTF-8), ${all.length - strings.length} of other types, values up to ${Math.max(0, ...values)} B, ${all.filter((k) => k.entry.fence).length} fences, ${all.filter((k) => k.entry.ttl === null).length} without expiry, ${all.filter((k) => k.entry.late).length} late`;
    })(),
  };
  const write = async (late: boolean) => {
    const batch = redisAdmin.multi();
    for (const { key, entry, value } of keys.values()) {
      if (entry.late !== late) continue;
      const bytes = valueOf(value);
      if (entry.fence && 'string' in entry.fence) batch.set(Buffer.concat([key, utf8(FENCE_SUFFIX)]), entry.fence.string);
      if (entry.fence && 'hash' in entry.fence) batch.hset(Buffer.concat([key, utf8(FENCE_SUFFIX)]), 'n', '1');
      if (entry.type === 'string') {
        if (entry.ttl === null) batch.set(key, bytes);
        else batch.set(key, bytes, 'PX', entry.ttl.toString());
      } else {
        const member = bytes.length > 0 ? bytes : utf8('m');
        if (entry.type === 'hash') batch.hset(key, member.subarray(0, 64), member);
        if (entry.type === 'list') batch.rpush(key, member);
        if (entry.type === 'set') batch.sadd(key, member);
        if (entry.type === 'zset') batch.zadd(key, '1', member);
        if (entry.ttl !== null) batch.pexpire(key, entry.ttl.toString());
      }
    }
    const results = (await batch.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
  };
  try {
    await write(false);
    await observe(
      storeKind,
      { name, backend: 'redis', urls: [redisObserverUrl], match: [`${prefix}*`], fenceSuffix: FENCE_SUFFIX, keyspaceNotifications: data.notifications },
      expected,
      {
        late: () => write(true),
        canary: async () => {
          await redisAdmin.multi().set(`${canaryKey}${FENCE_SUFFIX}`, '1').set(canaryKey, CANARY_HOLDER, 'PX', 60_000).exec();
        },
      },
      [REDIS_PASSWORD],
    );
  } finally {
    let cursor = '0';
    do {
      const [next, found] = await redisAdmin.scanBuffer(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next.toString();
      if (found.length) await redisAdmin.unlink(...found);
    } while (cursor !== '0');
  }
}

// ------------------------------------------------------------------------------ PostgreSQL

type Expiry = { null: true } | { offsetMs: number } | { literal: string };
const YEAR_MS = 365 * 86_400_000;
const expiryArb: fc.Arbitrary<Expiry> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ null: true as const }) },
  { weight: 2, arbitrary: fc.integer({ min: -10 * YEAR_MS, max: -1_000 }).map((offsetMs) => ({ offsetMs })) },
  { weight: 3, arbitrary: fc.integer({ min: 600_000, max: 100 * YEAR_MS }).map((offsetMs) => ({ offsetMs })) },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('infinity', '-infinity', '4000-01-01 00:00:00 BC', '4713-01-01 00:00:00 BC', '0001-01-01 00:00:00', '9999-12-31 23:59:59.999', '10000-01-01 00:00:00', '200000-01-01 00:00:00', '294276-12-30 00:00:00')
      .map((literal) => ({ literal })),
  },
);
const TOKENS = {
  numeric: ['1.5', '-1', '0', '42', '9223372036854775807', '9223372036854775809', '1e70', '1e77', '1e78', '1e80', '-1e70', 'NaN', 'Infinity', '-Infinity', '0.000001', '123456789012345678901234567890.0'],
  text: ['1.5', 'abc', '-1', '', ' 12', '12 ', '0x1f', '1e3', '\u0661\u0662', '\u202e42', '9223372036854775809', '1'.repeat(78), '1'.repeat(79), '9'.repeat(5_000), '-0', '+5'],
  bigint: ['-1', '0', '42', '9223372036854775807', '-9223372036854775808'],
};
type Variant = { token: keyof typeof TOKENS; expires: 'timestamptz' | 'timestamp' };
type PgRow = { name: string | null; owner: string | null; expires: Expiry; token: string | null };
type ShedRow = { name: string | null; lockedBy: string | null; lockUntil: Expiry; lockedAt: Expiry };
const pgData = fc
  .record({ token: fc.constantFrom<Variant['token']>('numeric', 'text', 'bigint'), expires: fc.constantFrom<Variant['expires']>('timestamptz', 'timestamp') })
  .chain((variant) =>
    fc.record({
      variant: fc.constant(variant),
      shared: sharedPrefix,
      rows: fc.array(
        fc.record({
          name: fc.option(text, { nil: null, freq: 8 }),
          shared: fc.boolean(),
          twin: fc.option(twinMark, { nil: null, freq: 3 }),
          owner: fc.option(fc.oneof(text, fc.constant('')), { nil: null, freq: 4 }),
          expires: expiryArb,
          token: fc.option(
            fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...TOKENS[variant.token]) }, { weight: 1, arbitrary: fc.bigInt({ min: variant.token === 'bigint' ? -(2n ** 63n) : -(10n ** 30n), max: variant.token === 'bigint' ? 2n ** 63n - 1n : 10n ** 30n }).map(String) }),
            { nil: null, freq: 4 },
          ),
        }),
        { minLength: 1, maxLength: 10 },
      ),
      shedlock: fc.array(
        fc.record({
          name: fc.option(text, { nil: null, freq: 8 }),
          lockedBy: fc.option(text, { nil: null, freq: 6 }),
          // lock_until - locked_at beyond 24.9 days (2^31 ms) is the point; some the other way round.
          lockUntil: fc.oneof(fc.integer({ min: 600_000, max: 50 * YEAR_MS }).map((offsetMs): Expiry => ({ offsetMs })), expiryArb),
          lockedAt: fc.oneof(fc.integer({ min: -50 * YEAR_MS, max: -30 * 86_400_000 }).map((offsetMs): Expiry => ({ offsetMs })), expiryArb),
        }),
        { maxLength: 5 },
      ),
    }),
  );
type PgData = typeof pgData extends fc.Arbitrary<infer T> ? T : never;

/** SQL for an expiry, given the parameter number of its value: the no-time-zone variant keeps UTC, as ShedLock writes. */
function expirySql(expiry: Expiry, type: Variant['expires'], param: number): { sql: string; value: unknown } {
  const now = type === 'timestamp' ? `(now() AT TIME ZONE 'UTC')` : 'now()';
  if ('null' in expiry) return { sql: `NULL::${type}`, value: null };
  if ('offsetMs' in expiry) return { sql: `${now} + ($${param}::bigint * interval '1 millisecond')`, value: expiry.offsetMs };
  return { sql: `$${param}::${type}`, value: expiry.literal };
}

async function pgRun(storeKind: 'postgres' | 'pglite', data: PgData) {
  const table = `hv_${hex()}`;
  const leases = `${table}_leases`;
  const shedlock = `${table}_shedlock`;
  const name = `h-pg-${hex()}`;
  const { variant } = data;
  const unique = <T extends { name: string | null }>(rows: T[]) => {
    const seen = new Set<string>();
    return rows.filter((row) => row.name === null || (!seen.has(row.name) && seen.add(row.name)));
  };
  const rows: PgRow[] = [];
  for (const row of data.rows) {
    if (row.name === null) {
      rows.push({ name: null, owner: row.owner, expires: row.expires, token: row.token });
      continue;
    }
    const base = `${row.shared ? data.shared : ''}${row.name}`;
    rows.push({ name: base, owner: row.owner, expires: row.expires, token: row.token });
    if (row.twin !== null) rows.push({ name: `${base}${row.twin}`, owner: row.owner === null ? null : `${row.owner}${row.twin}`, expires: row.expires, token: row.token });
  }
  const leaseRows = unique(rows.filter((row) => row.name !== 'canary'));
  const shedRows = unique(data.shedlock as ShedRow[]);
  const expected: Expected = {
    leases: leaseRows.filter((r) => r.name !== null).length + shedRows.filter((r) => r.name !== null).length + 1,
    canary: { id: `${name}/${leases}/canary`, token: '7' },
    summary: `pg ${storeKind} token ${variant.token}, expires_at ${variant.expires}: ${leaseRows.length} rows (${leaseRows.filter((r) => r.name === null).length} NULL names, longest name ${Math.max(0, ...leaseRows.map((r) => r.name?.length ?? 0))} chars; tokens ${json(leaseRows.map((r) => r.token?.slice(0, 12) ?? null))}), ${shedRows.length} ShedLock rows`,
  };
  const client = new pg.Client({ connectionString: observedDb.url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${leases} (name text, owner text, expires_at ${variant.expires}, token ${variant.token})`);
    await client.query(`CREATE TABLE ${shedlock} (name text, lock_until ${variant.expires}, locked_at ${variant.expires}, locked_by text)`);
    for (const row of leaseRows) {
      const expiry = expirySql(row.expires, variant.expires, 4);
      await client.query(`INSERT INTO ${leases} (name, owner, token, expires_at) VALUES ($1, $2, $3::${variant.token}, ${expiry.sql})`, [
        row.name,
        row.owner,
        row.token,
        ...(expiry.value === null ? [] : [expiry.value]),
      ]);
    }
    for (const row of shedRows) {
      const until = expirySql(row.lockUntil, variant.expires, 3);
      const at = expirySql(row.lockedAt, variant.expires, until.value === null ? 3 : 4);
      await client.query(`INSERT INTO ${shedlock} (name, locked_by, lock_until, locked_at) VALUES ($1, $2, ${until.sql}, ${at.sql})`, [
        row.name,
        row.lockedBy,
        ...[until.value, at.value].filter((v) => v !== null),
      ]);
    }
    const now = variant.expires === 'timestamp' ? `(now() AT TIME ZONE 'UTC')` : 'now()';
    await observe(
      storeKind,
      {
        name,
        backend: 'postgres',
        url: pgObserverUrl,
        tables: [
          { table: leases, format: 'leasehold' },
          { table: shedlock, format: 'shedlock' },
        ],
        advisoryLocks: false,
      },
      expected,
      {
        late: async () => {},
        canary: async () => {
          await client.query(`INSERT INTO ${leases} (name, owner, expires_at, token) VALUES ('canary', $1, ${now} + interval '60 seconds', '7'::${variant.token})`, [CANARY_HOLDER]);
        },
      },
      pgSecret === null ? [] : [pgSecret],
    );
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${leases}, ${shedlock}`).catch(() => {});
    await client.end();
  }
}

// ------------------------------------------------------------------------------ etcd

type EtcdValue = ValueSpec;
type EtcdEntry =
  | { kind: 'single'; body: Buffer; shared: boolean; value: EtcdValue; ttlSec: number | null; late: boolean; twin: string | null }
  | { kind: 'election'; body: Buffer; shared: boolean; candidates: { value: EtcdValue; idForm: 'hex' | 'HEX' | 'decimal' }[]; ttlSec: number; late: boolean }
  | { kind: 'lookalike'; body: Buffer; shared: boolean; value: EtcdValue; ttlSec: number; segment: string; late: boolean };
const ttlSecArb = fc.oneof(fc.integer({ min: 60, max: 3_600 }), fc.integer({ min: 3_600, max: 30 * 86_400 }), fc.constant(30 * 86_400));
const etcdValue = valueSpec(1_000_000);
const etcdEntry: fc.Arbitrary<EtcdEntry> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('single' as const),
      body: binaryKeyBody,
      shared: fc.boolean(),
      value: etcdValue,
      ttlSec: fc.option(ttlSecArb, { nil: null, freq: 4 }),
      late: fc.boolean(),
      twin: fc.option(twinMark, { nil: null, freq: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('election' as const),
      body: binaryKeyBody,
      shared: fc.boolean(),
      candidates: fc.array(fc.record({ value: fc.oneof(fc.constant({ small: Buffer.alloc(0) }), etcdValue), idForm: fc.constantFrom('hex' as const, 'HEX' as const, 'decimal' as const) }), { minLength: 1, maxLength: 3 }),
      ttlSec: ttlSecArb,
      late: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('lookalike' as const),
      body: binaryKeyBody,
      shared: fc.boolean(),
      value: etcdValue,
      ttlSec: ttlSecArb,
      // A last segment that looks like a lease id, but not the key's own: a single key.
      segment: fc.oneof(fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map((n) => n.toString(16)), fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String)),
      late: fc.boolean(),
    }),
  },
);
const etcdData = fc.record({ shared: sharedPrefix, entries: fc.array(etcdEntry, { minLength: 1, maxLength: 8 }) });
type EtcdData = typeof etcdData extends fc.Arbitrary<infer T> ? T : never;

async function etcdRun(storeKind: 'postgres' | 'pglite', data: EtcdData) {
  const prefix = `hv${hex()}/`;
  const name = `h-etcd-${hex()}`;
  const keyOf = (entry: { body: Buffer; shared: boolean }) => Buffer.concat([utf8(prefix), utf8('h'), entry.shared ? utf8(data.shared) : Buffer.alloc(0), entry.body]);
  // Elections once per name; a single key named as an election is left out (the two layouts
  // would name one lease); each key once.
  const elections = new Map<string, Extract<EtcdEntry, { kind: 'election' }>>();
  for (const entry of data.entries) if (entry.kind === 'election' && !elections.has(keyOf(entry).toString('latin1'))) elections.set(keyOf(entry).toString('latin1'), entry);
  const singles = new Map<string, { key: Buffer; value: EtcdValue; ttlSec: number | null; late: boolean }>();
  for (const entry of data.entries) {
    if (entry.kind === 'election') continue;
    const variants =
      entry.kind === 'lookalike'
        ? [{ key: Buffer.concat([keyOf(entry), utf8(`/${entry.segment}`)]), value: entry.value }]
        : [{ key: keyOf(entry), value: entry.value }, ...(entry.twin === null ? [] : [{ key: Buffer.concat([keyOf(entry), utf8(entry.twin)]), value: lastByteFlipped(entry.value) }])];
    for (const { key, value } of variants) {
      const id = key.toString('latin1');
      if (!elections.has(id) && !singles.has(id)) singles.set(id, { key, value, ttlSec: entry.ttlSec, late: entry.late });
    }
  }
  const leased = [...singles.values()].filter((s) => s.ttlSec !== null);
  const canaryKey = `${prefix}canary`;
  const leaseIds: string[] = [];
  /** Holders as the leases show them: a single's value (none when empty), an election leader's value or its lease id. */
  const holders = new Set<string>([`v${CANARY_HOLDER}`]);
  for (const s of leased) if (valueOf(s.value).length > 0) holders.add(`v${valueOf(s.value).toString('latin1')}`);

  const write = async (late: boolean) => {
    for (const single of singles.values()) {
      if (single.late !== late) continue;
      if (single.ttlSec === null) {
        await etcdAdmin.put(single.key).value(valueOf(single.value));
        continue;
      }
      const lease = etcdAdmin.lease(single.ttlSec, { autoKeepAlive: false });
      leaseIds.push(await lease.grant());
      await lease.put(single.key).value(valueOf(single.value));
    }
    for (const [id, election] of elections) {
      if (election.late !== late) continue;
      for (const [index, candidate] of election.candidates.entries()) {
        const lease = etcdAdmin.lease(election.ttlSec, { autoKeepAlive: false });
        const leaseId = await lease.grant();
        leaseIds.push(leaseId);
        const segment = candidate.idForm === 'decimal' ? leaseId : candidate.idForm === 'hex' ? BigInt(leaseId).toString(16) : BigInt(leaseId).toString(16).toUpperCase();
        const value = valueOf(candidate.value);
        // The first candidate written leads (the lowest create revision).
        if (index === 0) holders.add(value.length > 0 ? `v${value.toString('latin1')}` : `l${BigInt(leaseId).toString(16)}`);
        await lease.put(Buffer.concat([Buffer.from(id, 'latin1'), utf8(`/${segment}`)])).value(value);
      }
    }
  };
  const expected: Expected = {
    leases: leased.length + elections.size + 1,
    canary: { id: `${name}/${canaryKey}`, token: null },
    summary: `etcd ${storeKind}: ${singles.size} single keys (${singles.size - leased.length} without a lease, longest ${Math.max(0, ...[...singles.values()].map((s) => s.key.length))} B), ${elections.size} elections (${[...elections.values()].reduce((n, e) => n + e.candidates.length, 0)} candidates), values up to ${Math.max(0, ...[...singles.values()].map((s) => valueOf(s.value).length))} B`,
  };
  try {
    await write(false);
    await observe(
      storeKind,
      { name, backend: 'etcd', endpoints: [etcdServer.endpoint], prefixes: [prefix], username: 'root', password: ETCD_PASSWORD },
      {
        ...expected,
        get holders() {
          return holders.size;
        },
      },
      {
        late: () => write(true),
        canary: async () => {
          const lease = etcdAdmin.lease(60, { autoKeepAlive: false });
          leaseIds.push(await lease.grant());
          const { header } = await lease.put(canaryKey).value(CANARY_HOLDER).exec();
          // etcd's token is the key's create revision.
          expected.canary.token = String(header.revision);
        },
      },
      [ETCD_PASSWORD],
    );
  } finally {
    await etcdAdmin.delete().prefix(prefix).catch(() => {});
    await Promise.allSettled(leaseIds.map((ID) => etcdAdmin.leaseClient.leaseRevoke({ ID })));
  }
}

// ------------------------------------------------------------------------------ the properties

describe.each([
  ['PostgreSQL store', 'postgres' as const],
  ['embedded store (PGlite)', 'pglite' as const],
])('hostile backend values, observed into the %s', (_name, storeKind) => {
  it('Redis: keys of any bytes and lengths, values to 2 MB, PX to 2^62 ms, other types, fences beyond 2^63', async () => {
    await property(redisData, storeKind, (data) => redisRun(storeKind, data));
  }, TEST_TIMEOUT_MS);

  it('PostgreSQL: names and owners of any text to 10 kB, NULLs, infinite and far expiries, tokens of 1.5, NaN, 10^70, text; ShedLock TTLs beyond 24.9 days', async () => {
    await property(pgData, storeKind, (data) => pgRun(storeKind, data));
  }, TEST_TIMEOUT_MS);

  it('etcd: keys of any bytes, values to 1 MB, elections and mutexes in hex and decimal, look-alike candidates, TTLs to 30 days, keys without a lease', async () => {
    await property(etcdData, storeKind, (data) => etcdRun(storeKind, data));
  }, TEST_TIMEOUT_MS);
});
