// ZooKeeper source: Apache Curator's locks (InterProcessMutex, LeaderSelector) and leader
// latches under the configured paths, read by watches with a periodic full read as the net
// under them, and the servers' own status from their four-letter words. This file holds the
// source itself; the parts are client.ts (session and calls), read.ts (the walk and the
// leases), curator.ts (the layouts) and words.ts (srvr, mntr).
import type { Event } from 'node-zookeeper-client';
import type { BackendContext } from '../backend';
import { SourceUnavailableError } from '../errors';
import { exactOf } from '../exact';
import { systemClock, type Clock } from '../../time/clock';
import { unescapeText } from '../../domain/display';
import { reconcileDue, type ChangeHint, type FullReadTimes, type LeaseSource, type PollResult, type Progress, type SourceSnapshot, type UnreadScope } from '../types';
import type { ZookeeperSourceConfig } from './config';
import { serversOf } from './config';
import { createZkConnection, targetOf, zookeeperProblem, type ZkConnection } from './client';
import { leaseAt, leasesUnder, limiter, watchedChildren } from './read';
import { serverStatus, type ServerStatus } from './words';
import { createQuarantineSweeper, type QuarantineSweeper } from './quarantine';

const unavailable = (config: ZookeeperSourceConfig, error: unknown, what: string) =>
  error instanceof SourceUnavailableError ? error : new SourceUnavailableError(config.name, `${what}: ${zookeeperProblem(error, targetOf(config))}`, { cause: error });

/** The servers' status: every server asked at once; the source is down only when none answers. */
async function statusOf(config: ZookeeperSourceConfig, signal: AbortSignal, sessionTimeoutMs: number | null) {
  const answers = await Promise.allSettled(serversOf(config).map((server) => serverStatus(server, signal)));
  const servers = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  if (servers.length === 0) throw (answers[0] as PromiseRejectedResult).reason;
  const unreachable = answers.flatMap((a, i) => (a.status === 'rejected' ? [serversOf(config)[i]!] : []));
  const leader = servers.find((s) => s.mode === 'leader' || s.mode === 'standalone') ?? null;
  return { servers, unreachable, mode: leader?.mode ?? servers[0]!.mode, zxid: leader?.zxid ?? null, sessionTimeoutMs } satisfies Record<string, unknown> & { servers: ServerStatus[] };
}

/** Paths as hints and reads name them: a lease key is the exact text of its path. */
function pathOfKey(paths: Map<string, string>, key: string): string | null {
  const known = paths.get(key);
  if (known !== undefined) return known;
  const bytes = unescapeText(key);
  return bytes ? Buffer.from(bytes).toString('utf8') : null;
}

type ZkState = {
  config: ZookeeperSourceConfig;
  clock: Clock;
  connection: ZkConnection;
  pollMs: number;
  /** Lease keys (exact text) and the paths they are at, as the last reads found them. */
  leasePaths: Map<string, string>;
  pathKeys: Map<string, string>;
  times: FullReadTimes;
  onHint: ((hint: ChangeHint) => void) | null;
  /** When the watches were last all set by a full read (a new session loses them). */
  watchesSetAt: number;
  /** One watcher for every path (the client registers a function once per path). */
  watcher: (event: Event) => void;
  /** Ends the quarantines the reads find, each at its end. */
  sweeper: QuarantineSweeper;
};

function createState(config: ZookeeperSourceConfig, defaultPollMs: number, clock: Clock, log?: (line: string) => void): ZkState {
  const connection = createZkConnection(config);
  const state: ZkState = {
    config,
    clock,
    connection,
    sweeper: createQuarantineSweeper((signal) => connection.client(signal), () => clock.wall(), log),
    pollMs: config.pollMs ?? defaultPollMs,
    leasePaths: new Map(),
    pathKeys: new Map(),
    times: { lastFullAt: -Infinity, lastFullMs: 0 },
    onHint: null,
    watchesSetAt: -Infinity,
    watcher: (event) => {
      // The event is spent (a watch fires once): with nobody to tell, the next poll reads everything and sets it again.
      if (!state.onHint) return void (state.watchesSetAt = -Infinity);
      const key = state.pathKeys.get(event.getPath());
      if (key !== undefined) state.onHint({ keys: [key], urgent: true, reason: event.getName() });
      else state.onHint({ full: true, reason: `${event.getName()} under an observed path` });
    },
  };
  state.connection.onExpired = () => {
    state.watchesSetAt = -Infinity;
    state.onHint?.({ full: true, gap: true, reason: 'the ZooKeeper session expired: its watches are gone' });
  };
  state.connection.onNewSession = () => {
    state.watchesSetAt = -Infinity;
    state.onHint?.({ full: true, gap: true, reason: 'a new ZooKeeper session: the watches of the old one are gone' });
  };
  return state;
}

function learn(state: ZkState, path: string, key: string) {
  state.leasePaths.set(key, path);
  state.pathKeys.set(path, key);
}

async function readEverything(state: ZkState, signal: AbortSignal, progress?: Progress): Promise<SourceSnapshot> {
  const { config, clock, watcher } = state;
  if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
  try {
    const startedAt = clock.mono();
    const status = await statusOf(config, signal, null);
    progress?.();
    const client = await state.connection.client(signal);
    const reads = [];
    const limit = limiter();
    for (const root of config.paths) reads.push(await leasesUnder({ client, signal, watcher, progress, limit, onQuarantine: state.sweeper.saw }, root));
    state.leasePaths.clear();
    state.pathKeys.clear();
    for (const { leases } of reads) for (const { path, observation } of leases) learn(state, path, observation.key);
    const unread: UnreadScope[] = reads.flatMap((r) => (r.unread ? [r.unread] : []));
    state.times.lastFullAt = startedAt;
    state.times.lastFullMs = clock.mono() - startedAt;
    if (state.watchesSetAt === -Infinity) state.watchesSetAt = startedAt;
    return {
      observations: reads.flatMap((r) => r.leases.map((l) => l.observation)),
      status: { ...status, sessionTimeoutMs: client.getSessionTimeout() },
      ...(unread.length > 0 ? { unread } : {}),
    };
  } catch (error) {
    throw unavailable(config, error, 'reading');
  }
}

async function readLeaseKeys(state: ZkState, keys: string[], signal: AbortSignal) {
  const { config, watcher } = state;
  if (signal.aborted) throw new SourceUnavailableError(config.name, 'the read was cancelled');
  try {
    const client = await state.connection.client(signal);
    const reader = { client, signal, watcher, limit: limiter(), onQuarantine: state.sweeper.saw };
    const found = await Promise.all(
      keys.map(async (key) => {
        const path = pathOfKey(state.leasePaths, key);
        if (path === null) return { key, observation: undefined };
        // A lock whose emptied parent was reaped is watched for its creation: the next acquisition comes as a hint.
        const children = await watchedChildren(reader, path);
        const observation = children === null ? undefined : await leaseAt(reader, path, children);
        if (observation) learn(state, path, observation.key);
        return { key: exactOf(path), observation };
      }),
    );
    return { covered: found.map((f) => f.key), observations: found.flatMap((f) => (f.observation ? [f.observation] : [])) };
  } catch (error) {
    throw unavailable(config, error, 'reading');
  }
}

export function createZookeeperSource(config: ZookeeperSourceConfig, defaultPollMs: number, options: Pick<BackendContext, 'clock' | 'log'> = {}): LeaseSource {
  const state = createState(config, defaultPollMs, options.clock ?? systemClock, options.log ? (line) => options.log!.warn({ source: config.name }, line) : undefined);
  return {
    name: config.name,
    backend: 'zookeeper',
    pollMs: state.pollMs,

    snapshot: (signal, progress) => readEverything(state, signal, progress),

    async poll(signal, progress): Promise<PollResult> {
      // While watches are set, changes come as hints: a poll checks the servers answer.
      if (!state.onHint || state.watchesSetAt === -Infinity || reconcileDue(state.times, state.clock.mono(), state.pollMs)) return { kind: 'full', ...(await readEverything(state, signal, progress)) };
      try {
        const client = await state.connection.client(signal);
        return { kind: 'partial', covered: [], observations: [], status: { ...(await statusOf(config, signal, client.getSessionTimeout())) } };
      } catch (error) {
        throw unavailable(config, error, 'reading the servers\' status');
      }
    },

    readKeys: (keys, signal) => readLeaseKeys(state, keys, signal),

    async watch(hint, signal) {
      // The watches are set by the reads themselves; this only hands their events on until aborted.
      state.onHint = hint;
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      state.onHint = null;
    },

    async close() {
      state.sweeper.close();
      state.connection.close();
    },
  };
}
