// The Redis instances a source reads (one, or several forming a Redlock quorum): their
// connections, each with its command deadline and its last error, the state the source's
// reads share, and the status it reports of them.
import Redis from 'ioredis';
import type { RedisSourceConfig } from './config';
import { redactUrlPassword } from '../../redact';
import { systemClock, type Clock } from '../../time/clock';
import { silentLogger, type Logger } from '../../log';
import { connectionProblem } from '../errors';
import type { SourceStatusDetail } from '../types';
import { READ_KEYS, type ReaderRedis } from './keys';

const CONNECT_TIMEOUT_MS = 3_000;
/** A command not answered within this fails (and the read with it). */
const COMMAND_TIMEOUT_MS = 3_000;

export type RedisInstance = { url: string; label: string; redis: ReaderRedis; notifications: boolean; lastError: string | null; connectionError: string | null };

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
  /** What liveSince and lastFullAt are read on. */
  clock: Clock;
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

function connectInstance(url: string): RedisInstance {
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
}

/** A source's state: a connection to each instance, nothing live yet, no full read yet. */
export function connectInstances(config: RedisSourceConfig, clock: Clock = systemClock, log: Logger = silentLogger()): RedisSourceState {
  const instances = config.urls.map((url) => connectInstance(url));
  const quorum = Math.floor(instances.length / 2) + 1;
  const redlock = instances.length > 1;
  return { config, instances, quorum, redlock, live: 0, liveSince: Infinity, lastFullAt: -Infinity, clock, log };
}

/** Why a call to an instance failed, in words. */
export const problemOf = (instance: RedisInstance, reason: unknown) =>
  instance.redis.status !== 'ready' && instance.connectionError
    ? instance.connectionError
    : redactUrlPassword(connectionProblem(reason, `Redis at ${instance.label}`));

export function status(state: RedisSourceState): SourceStatusDetail {
  const { instances, quorum, redlock } = state;
  return {
    mode: redlock ? 'redlock' : 'single',
    quorum: redlock ? quorum : undefined,
    instances: instances.map((i) => ({ instance: i.label, up: i.lastError === null, error: i.lastError, keyspaceNotifications: i.notifications })),
  };
}

export async function closeInstances(state: RedisSourceState): Promise<void> {
  await Promise.all(state.instances.map((i) => i.redis.quit().catch(() => i.redis.disconnect())));
}
