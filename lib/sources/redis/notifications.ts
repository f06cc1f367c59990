// Keyspace notifications: whether an instance sends them (turned on when the config asks),
// one pattern subscription per instance kept live by hand, and the change hints its events
// become. The live count in the state tells polls when they may rely on the push stream.
import type Redis from 'ioredis';
import type { RedisSourceConfig } from './config';
import type { ChangeHint } from '../types';
import { dbOf, type RedisInstance, type RedisSourceState } from './instances';

/** Whether these notify-keyspace-events flags send keyspace events (K) on set, expire, del and expiry. */
export function flagsAreEnough(flags: string): boolean {
  const has = (f: string) => flags.includes(f) || (flags.includes('A') && 'g$lshzxet'.includes(f));
  return flags.includes('K') && has('g') && has('$') && has('x');
}

/** An instance's notify-keyspace-events flags (CONFIG GET). */
export async function keyspaceFlags(redis: Redis): Promise<string> {
  const reply = (await redis.config('GET', 'notify-keyspace-events')) as string[];
  return reply[1] ?? '';
}

/**
 * A poll's liveness check of an instance that sends keyspace events: its flags, read again (a
 * ping that also says whether the events still come). Switched off, the instance's changes are
 * found by reading everything until they are back; back, what changed meanwhile was not
 * announced, so everything is read once more before the push stream is relied on again.
 */
export async function checkEvents(state: RedisSourceState, instance: RedisInstance): Promise<void> {
  const flags = await keyspaceFlags(instance.redis);
  let on = flagsAreEnough(flags);
  // A source that turns the events on turns them on again (a restarted Redis forgets a CONFIG
  // SET); what changed while they were off was not announced, so everything is read once more.
  if (!on && state.config.keyspaceNotifications === 'enable' && (await turnOn(instance.redis, flags))) {
    on = true;
    state.liveSince = state.clock.mono();
    state.log.warn({ instance: instance.label }, `keyspace events were off on ${instance.label}: switched on again (keyspaceNotifications: enable)`);
  }
  if (on === !instance.eventsOff) return;
  instance.eventsOff = !on;
  if (on) state.liveSince = state.clock.mono();
  state.log.warn(
    { instance: instance.label },
    on ? `keyspace events are back on ${instance.label}` : `keyspace events were switched off on ${instance.label}: its changes are found by reading everything at each poll`,
  );
}

/** Whether keyspace events reach us for keys (K) on set, expire, del and expiry; turns them on when asked. */
async function notificationsOn(config: RedisSourceConfig, redis: Redis): Promise<boolean> {
  if (config.keyspaceNotifications === 'off') return false;
  let flags = '';
  try {
    flags = await keyspaceFlags(redis);
  } catch {
    return false; // CONFIG is disabled on many managed servers: poll only
  }
  const enough = flagsAreEnough(flags);
  if (enough || config.keyspaceNotifications !== 'enable') return enough;
  return turnOn(redis, flags);
}

/** Adds the flags keyspace events need to an instance's own (CONFIG SET); false when refused. */
async function turnOn(redis: Redis, flags: string): Promise<boolean> {
  try {
    await redis.config('SET', 'notify-keyspace-events', `${flags}Kg$x`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a keyspace event can only be a renewal: `expire`, which every EXPIRE, PEXPIRE and
 * their AT forms with a time to come send (one in the past deletes: `del`). Anything else (a
 * set, a delete, an expiry, a fence's increment) may move a holder, and is read at once on its
 * own (ChangeHint.urgent).
 */
export function isRenewalEvent(event: Buffer | string): boolean {
  return event.toString() === 'expire';
}

/** A subscriber to the instance's keyspace events for the configured patterns; each event a hint naming its lock key. */
function subscribeInstance(state: RedisSourceState, instance: RedisInstance, onHint: (hint: ChangeHint) => void): Redis {
  const { config } = state;
  const suffix = config.fenceSuffix;
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
    } catch (error) {
      instance.notifications = false;
      state.log.warn({ instance: instance.label }, `keyspace events could not be subscribed on ${instance.label} (${(error as Error)?.message ?? error}): its changes are found by polling`);
      return;
    }
    instance.notifications = true;
    if (!counted) state.live++;
    counted = true;
    // What changed before the subscription was not announced: read everything again.
    state.liveSince = state.clock.mono();
  };
  subscriber.on('ready', () => void subscribe());
  // While the subscription is down, changes are missed: polls read everything again.
  subscriber.on('close', () => {
    if (counted) state.live--;
    counted = false;
  });
  subscriber.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, event: Buffer) => {
    let raw = channel.subarray(prefix.length).toString('latin1');
    if (raw.endsWith(suffix)) raw = raw.slice(0, -suffix.length);
    onHint(isRenewalEvent(event) ? { keys: [raw] } : { keys: [raw], urgent: true });
  });
  return subscriber;
}

/** LeaseSource.watch: hints from every instance that sends keyspace events, until `signal` aborts. */
export async function watchKeyspace(state: RedisSourceState, onHint: (hint: ChangeHint) => void, signal: AbortSignal): Promise<void> {
  const subscribers: Redis[] = [];
  for (const instance of state.instances) {
    if (!(await notificationsOn(state.config, instance.redis).catch(() => false))) {
      state.log.debug({ instance: instance.label }, `no keyspace events from ${instance.label}: its changes are found by polling`);
      continue;
    }
    subscribers.push(subscribeInstance(state, instance, onHint));
  }
  if (subscribers.length === 0) return;
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  for (const subscriber of subscribers) subscriber.disconnect();
}
