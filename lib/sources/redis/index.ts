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
// SIGSTOPped process still accepts connections) fails the read instead of holding it. In a
// quorum each instance also has an answer deadline tied to the poll interval
// (instances.ts answerDeadlineMs): one that freezes is read as not answering at the next poll
// while the others are read.
//
// Here: the source and its reads. Reading keys from one instance: keys.ts; the connections
// and shared state: instances.ts; keys to Observations: observe.ts (Redlock: quorum.ts);
// keyspace notifications: notifications.ts.
import type { RedisSourceConfig } from './config';
import { redactUrlPassword } from '../../redact';
import type { Observation } from '../../domain/observe';
import type { BackendContext } from '../backend';
import { SourceUnavailableError } from '../errors';
import { reconcileDue, type LeaseSource, type PollResult, type Progress, type SourceSnapshot } from '../types';
import { closeInstances, connectInstances, problemOf, status, withinDeadline, type RedisSourceState } from './instances';
import { keyOf, scanInstance } from './keys';
import { checkEvents, watchKeyspace } from './notifications';
import { read } from './observe';

/** A read's failure as the source's: SourceUnavailableError, its message without URL passwords. */
function unavailable(state: RedisSourceState, error: unknown): never {
  if (error instanceof SourceUnavailableError) throw error;
  throw new SourceUnavailableError(state.config.name, redactUrlPassword((error as Error).message), { cause: error });
}

async function snapshot(state: RedisSourceState, signal: AbortSignal, progress?: Progress): Promise<SourceSnapshot> {
  try {
    const startedAt = state.clock.mono();
    const observations = await read(state, 'full', (redis, signal) => scanInstance(redis, state.config.match, signal, progress), signal, progress);
    state.lastFullAt = startedAt;
    state.lastFullMs = state.clock.mono() - startedAt;
    return { observations, status: status(state) };
  } catch (error) {
    return unavailable(state, error);
  }
}

async function poll(state: RedisSourceState, pollMs: number, signal: AbortSignal, progress?: Progress): Promise<PollResult> {
  const { instances } = state;
  if (state.live < instances.length || state.lastFullAt < state.liveSince || reconcileDue(state, state.clock.mono(), pollMs)) {
    return { kind: 'full', ...(await snapshot(state, signal, progress)) };
  }
  const answeredBefore = instances.map((i) => i.lastError === null);
  // A ping; for an instance that sends keyspace events, a read of its flags (they may be switched off under us).
  const pings = await Promise.allSettled(instances.map((i) => withinDeadline(state, i, 'ping', () => (i.notifications ? checkEvents(state, i) : i.redis.ping().then(() => {})))));
  pings.forEach((p, index) => {
    instances[index]!.lastError = p.status === 'rejected' ? problemOf(instances[index]!, p.reason) : null;
  });
  // An instance that does not answer, or answers again, changes what the quorum is judged on
  // (each lease's instances): read everything now rather than show the last read as current.
  // So does one whose keyspace events were switched off: nothing is pushed, so everything is read.
  if (pings.some((p, index) => p.status === 'rejected' || !answeredBefore[index]) || instances.some((i) => i.eventsOff)) return { kind: 'full', ...(await snapshot(state, signal, progress)) };
  return { kind: 'partial', covered: [], observations: [] };
}

async function readKeys(state: RedisSourceState, keys: string[], signal: AbortSignal): Promise<{ covered: string[]; observations: Observation[] }> {
  const wanted = new Set(keys);
  try {
    return { covered: keys.map(keyOf), observations: await read(state, 'keys', async () => wanted, signal) };
  } catch (error) {
    return unavailable(state, error);
  }
}

/** `options.clock`: what its reads are timed on (default: the system clock); `options.log`: its logger. */
export function createRedisSource(config: RedisSourceConfig, defaultPollMs: number, options: Pick<BackendContext, 'clock' | 'log'> = {}): LeaseSource {
  const state = connectInstances(config, { clock: options.clock, log: options.log, pollMs: config.pollMs ?? defaultPollMs });
  return {
    name: config.name,
    backend: 'redis',
    pollMs: config.pollMs ?? defaultPollMs,
    snapshot: (signal, progress) => snapshot(state, signal, progress),
    poll: (signal, progress) => poll(state, config.pollMs ?? defaultPollMs, signal, progress),
    readKeys: (keys, signal) => readKeys(state, keys, signal),
    watch: (onHint, signal) => watchKeyspace(state, onHint, signal),
    close: () => closeInstances(state),
  };
}
