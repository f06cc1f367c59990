// The Redis instances a source reads (one, or several forming a Redlock quorum): their
// connections, each with its command deadline and its last error, the state the source's
// reads share, and the status it reports of them.
import Redis from 'ioredis';
import type { RedisSourceConfig } from './config';
import { redactUrlPassword } from '../../redact';
import { systemClock, type Clock } from '../../time/clock';
import { silentLogger, type Logger } from '../../log';
import { percentile } from '../../domain/renewal-stats';
import { connectionProblem } from '../errors';
import type { SourceStatusDetail } from '../types';
import { READ_KEYS, UnexpectedAnswerError, type ReaderRedis } from './keys';

const CONNECT_TIMEOUT_MS = 3_000;
/** A command not answered within this fails (and the read with it). */
const COMMAND_TIMEOUT_MS = 3_000;

/** What a quorum's instance is asked: a ping, a full read (SCAN and the keys), or named keys. */
export type AnswerKind = 'ping' | 'full' | 'keys';

export type RedisInstance = {
  url: string;
  label: string;
  redis: ReaderRedis;
  notifications: boolean;
  /**
   * Its keyspace events were switched off after it was subscribed (CONFIG SET by someone else):
   * the subscription is live but says nothing, so polls read everything until they are back.
   */
  eventsOff: boolean;
  lastError: string | null;
  connectionError: string | null;
  /** Whether a call given up on by its answer deadline is still waiting (the instance is not asked again until it ends). */
  abandoned: boolean;
  /** How long its last answer of each kind took (ms; 0 before the first). */
  answerMs: Record<AnswerKind, number>;
};

/**
 * How long one instance of a quorum may take to answer before it counts as not answering while
 * the others are read: the poll interval (at least 250 ms), or three times what the instances
 * typically take for that kind of call (their median: a large keyspace makes full reads slow on
 * all of them). A frozen instance is then shown as not answering at the next poll, not after
 * the source's read deadline (5 s at least). A ping is given at most the command deadline; a
 * read is bounded by the source's read deadline, which aborts it.
 */
export function answerDeadlineMs(pollMs: number, kind: AnswerKind, answerMs: readonly number[]): number {
  const typical = answerMs.length ? percentile([...answerMs].sort((a, b) => a - b), 50) : 0;
  const deadline = Math.max(250, pollMs, 3 * typical);
  return kind === 'ping' ? Math.min(COMMAND_TIMEOUT_MS, deadline) : deadline;
}

/** An instance that did not answer within answerDeadlineMs, or is still busy with a call given up on. */
export class NoAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoAnswerError';
  }
}

/**
 * `work` on one instance of a quorum, given up on (and the instance counted as not answering)
 * when it has not answered within its deadline. An instance whose call was given up on and has
 * not ended is not asked again until it does, so a frozen one does not pile up calls; calls that
 * merely overlap (a poll and a read of named keys) both run. What was given up on still ends by
 * ioredis's own command deadline.
 */
export async function withinDeadline<T>(state: RedisSourceState, instance: RedisInstance, kind: AnswerKind, work: () => Promise<T>): Promise<T> {
  // One instance is read until ioredis's own deadline: there is no other to read meanwhile.
  if (!state.redlock) return work();
  if (instance.abandoned) throw new NoAnswerError(`Redis at ${instance.label} has not answered an earlier call yet`);
  const deadlineMs = answerDeadlineMs(state.pollMs, kind, state.instances.map((i) => i.answerMs[kind]));
  const startedAt = state.clock.mono();
  const running = work().then((answer) => {
    instance.answerMs[kind] = state.clock.mono() - startedAt;
    return answer;
  });
  const stop = new AbortController();
  try {
    return await Promise.race([
      running,
      state.clock.sleep(deadlineMs, stop.signal).then(() => {
        if (stop.signal.aborted) return new Promise<never>(() => {});
        instance.abandoned = true;
        running.then(
          () => (instance.abandoned = false),
          () => (instance.abandoned = false),
        );
        throw new NoAnswerError(`Redis at ${instance.label} did not answer within ${deadlineMs} ms`);
      }),
    ]);
  } finally {
    stop.abort();
  }
}

/** What a source's reads, polls and watch share. */
export type RedisSourceState = {
  config: RedisSourceConfig;
  instances: RedisInstance[];
  quorum: number;
  redlock: boolean;
  // While every instance's keyspace notifications are live, a poll only checks that the
  // instances answer: changes (renewals included: PEXPIRE is an 'expire' event) come pushed.
  // A poll may rely on the push stream only after a full read that *started* once every
  // subscription was confirmed (liveSince): a change made before that read's SCAN is in it, one
  // made after the subscription is announced. (As the etcd source does with its watch.)
  live: number;
  liveSince: number;
  lastFullAt: number;
  /** How long the last full read took (reconcileDue). */
  lastFullMs: number;
  /** What liveSince and lastFullAt are read on. */
  clock: Clock;
  /** The source's poll interval: each instance's answer deadline is tied to it (answerDeadlineMs). */
  pollMs: number;
  /** The source's logger (its context's; silent when none is handed). */
  log: Logger;
};

export function instanceLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return redactUrlPassword(url);
  }
}

export function dbOf(url: string): number {
  try {
    return Number(new URL(url).pathname.slice(1)) || 0;
  } catch {
    return 0;
  }
}

/**
 * How long ioredis waits before connecting again, the nth time in a row: growing by 100 ms up
 * to half the poll interval (100 ms to 2 s). A server that comes back is connected to again
 * before the collector's next attempt at the source (at most two polls apart while it is down),
 * so that its history resumes within two polls; an attempt at a closed port costs nothing.
 */
export const reconnectDelayMs = (attempt: number, pollMs: number) => Math.min(attempt * 100, Math.max(100, Math.min(2_000, Math.floor(pollMs / 2))));

function connectInstance(url: string, pollMs: number): RedisInstance {
  const redis = new Redis(url, {
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    socketTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => reconnectDelayMs(attempt, pollMs),
  }) as ReaderRedis;
  const instance: RedisInstance = { url, label: instanceLabel(url), redis, notifications: false, eventsOff: false, lastError: null, connectionError: null, abandoned: false, answerMs: { ping: 0, full: 0, keys: 0 } };
  // What went wrong with the connection itself: a command failing while disconnected only
  // says that it was not sent ("max retries per request"), this says why.
  redis.on('error', (error) => (instance.connectionError = connectionProblem(error, `Redis at ${instanceLabel(url)}`)));
  redis.on('ready', () => (instance.connectionError = null));
  redis.defineCommand('readKeys', { lua: READ_KEYS });
  return instance;
}

/** A source's state: a connection to each instance, nothing live yet, no full read yet. */
export function connectInstances(config: RedisSourceConfig, { clock = systemClock, log = silentLogger(), pollMs = 1_000 }: { clock?: Clock; log?: Logger; pollMs?: number } = {}): RedisSourceState {
  const instances = config.urls.map((url) => connectInstance(url, pollMs));
  const quorum = Math.floor(instances.length / 2) + 1;
  const redlock = instances.length > 1;
  return { config, instances, quorum, redlock, live: 0, liveSince: Infinity, lastFullAt: -Infinity, lastFullMs: 0, clock, log, pollMs };
}

/** Why a call to an instance failed, in words. */
export const problemOf = (instance: RedisInstance, reason: unknown) =>
  reason instanceof NoAnswerError
    ? reason.message
    : reason instanceof UnexpectedAnswerError
    ? `Redis at ${instance.label} gave ${reason.message} (is Redis on that port? a connection to a closed local port can end up connected to itself and echo what it sends)`
    : instance.redis.status !== 'ready' && instance.connectionError
    ? instance.connectionError
    : redactUrlPassword(connectionProblem(reason, `Redis at ${instance.label}`));

export function status(state: RedisSourceState): SourceStatusDetail {
  const { instances, quorum, redlock } = state;
  return {
    mode: redlock ? 'redlock' : 'single',
    quorum: redlock ? quorum : undefined,
    instances: instances.map((i) => ({ instance: i.label, up: i.lastError === null, error: i.lastError, keyspaceNotifications: i.notifications && !i.eventsOff })),
  };
}

export async function closeInstances(state: RedisSourceState): Promise<void> {
  await Promise.all(state.instances.map((i) => i.redis.quit().catch(() => i.redis.disconnect())));
}
