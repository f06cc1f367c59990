// The watch loop: watches every prefix from the last revision seen, keeps the mirror and the
// values current from its events, and turns each event into a hint naming the lease to re-read.
import type { IKeyValue, Watcher } from 'etcd3';
import type { ChangeHint } from '../types';
import { candidateOf } from './observe';
import { learnValue } from './read';
import { remember, type EtcdState } from './state';

// Renewals (keepalives) are invisible to a watch, so the remaining TTL is read on every poll;
// the watch only makes acquisitions, releases and expiries visible at once. After a watch
// falls behind a compaction, the source says so (a gap) instead of pretending nothing happened.

type RoundEnd = 'aborted' | 'compacted' | 'canceled' | 'failed';

// Each event names a key; the lease it belongs to is what gets re-read.
export function leaseKeysOf(kv: IKeyValue): string[] {
  const key = kv.key.toString('latin1');
  const lease = String(kv.lease ?? '0');
  const slash = key.lastIndexOf('/');
  if (candidateOf(key, lease) !== null) return [key.slice(0, slash)];
  // A delete of a key never seen carries no lease id: it may be a candidate (its last
  // segment a lease id) or a single key; both are read again.
  if (lease === '0' && slash > 0 && /^[0-9a-f]+$/i.test(key.slice(slash + 1))) return [key, key.slice(0, slash)];
  return [key];
}

/** The watch stopped showing changes: said once per interruption, with a full read asked for. */
function interrupted(state: EtcdState, onHint: (hint: ChangeHint) => void, reason: string) {
  if (state.watchCut) return;
  state.watchCut = true;
  onHint({ full: true, gap: true, reason });
}

/** Watches every prefix from `from` until the signal aborts or a watcher fails. */
async function watchRound(state: EtcdState, from: string, onHint: (hint: ChangeHint) => void, signal: AbortSignal): Promise<RoundEnd> {
  const { client, config, mirror, values } = state;
  const watchers: Watcher[] = [];
  const cut = new Set<Watcher>();
  let over = false;
  let finish: (how: RoundEnd) => void = () => {};
  const ended = new Promise<RoundEnd>((resolve) => (finish = resolve));
  const onAbort = () => finish('aborted');
  signal.addEventListener('abort', onAbort, { once: true });
  const onPut = (kv: IKeyValue) => {
    state.lastRevision = String(kv.mod_revision ?? state.lastRevision);
    if (String(kv.lease ?? '0') !== '0') learnValue(values, kv);
    remember(mirror, kv);
    onHint({ keys: leaseKeysOf(kv) });
  };
  const onDelete = (kv: IKeyValue) => {
    state.lastRevision = String(kv.mod_revision ?? state.lastRevision);
    // A delete carries no lease id: the key as last seen says which lease it belonged to.
    const key = kv.key.toString('latin1');
    const before = mirror.get(key);
    mirror.delete(key);
    values.delete(key);
    onHint({ keys: leaseKeysOf(before ?? kv) });
  };
  try {
    for (const prefix of config.prefixes) {
      const watcher = await client.watch().prefix(Buffer.from(prefix, 'latin1')).startRevision(from).create();
      watchers.push(watcher);
      watcher.on('put', onPut);
      watcher.on('delete', onDelete);
      // etcd3 reconnects a broken stream and resumes each watcher on its own. Until every one
      // is back, the mirror is not kept and events may be missing: polls read everything, and
      // what was seen is judged across a gap (a compaction while it was away is only told when
      // it is back, after a read may already have found the change).
      watcher.on('disconnected', () => {
        cut.add(watcher);
        state.watchLive = false;
        interrupted(state, onHint, 'the etcd watch was cut off');
      });
      watcher.on('connected', () => {
        // A watcher reconnecting as the round ends (cancel() waits for it) says nothing of the next round.
        if (!cut.delete(watcher) || cut.size > 0 || signal.aborted || over) return;
        state.watchLive = true;
        state.watchLiveSince = state.clock.mono();
        state.watchCut = false; // the next cut is said again
      });
      // etcd cancels a watch whose start revision was compacted away; 3.4 gives no reason.
      watcher.on('error', (error: Error) => {
        interrupted(state, onHint, 'the etcd watch ended');
        finish(/compacted/i.test(error.message) ? 'compacted' : /canceled/i.test(error.message) ? 'canceled' : 'failed');
      });
    }
    if (signal.aborted) return 'aborted';
    // Live, unless a watcher was cut off while the others were being made (its 'connected' will say).
    if (cut.size === 0) {
      state.watchLive = true;
      state.watchLiveSince = state.clock.mono();
      state.watchCut = false;
    }
    return await ended;
  } catch (error) {
    return /compacted/i.test((error as Error)?.message ?? '') ? 'compacted' : 'failed';
  } finally {
    // Not live any more: until the next round is, polls read everything.
    over = true;
    state.watchLive = false;
    signal.removeEventListener('abort', onAbort);
    // cancel() waits for the watcher to be connected first, which a cancelled one never
    // will be again: do not wait for it longer than a moment.
    await Promise.all(
      watchers.map((watcher) => Promise.race([watcher.cancel().catch(() => {}), state.clock.sleep(1_000)])),
    );
  }
}

/** Pushes change hints, a watch round after another, until the signal aborts. */
export async function watchChanges(state: EtcdState, onHint: (hint: ChangeHint) => void, signal: AbortSignal): Promise<void> {
  const { client, config } = state;
  while (!signal.aborted) {
    let from: string;
    try {
      // Resume after the last revision seen; the first time, from now.
      from = state.lastRevision ? (BigInt(state.lastRevision) + 1n).toString() : (BigInt((await client.kv.range({ key: Buffer.from(config.prefixes[0]!), limit: 1 })).header.revision) + 1n).toString();
    } catch {
      await state.clock.sleep(1_000, signal);
      continue;
    }
    let ended = await watchRound(state, from, onHint, signal);
    if (ended === 'aborted') return;
    state.log.debug({ ended }, `the watch ended (${ended}); starting another`);
    interrupted(state, onHint, 'the etcd watch ended');
    if (ended === 'canceled') {
      // Was it a compaction? A read at the revision we resumed from says so.
      ended = await client.kv
        .range({ key: Buffer.from(config.prefixes[0]!, 'latin1'), revision: state.lastRevision ? (BigInt(state.lastRevision) + 1n).toString() : from, limit: 1 })
        .then(
          () => 'failed' as const,
          (error: Error) => (/compacted/i.test(error.message) ? ('compacted' as const) : ('failed' as const)),
        );
    }
    if (ended === 'compacted') {
      // Events between the last revision seen and the compaction are gone: say so.
      state.lastRevision = null;
      onHint({ full: true, gap: true, reason: 'the etcd watch fell behind a compaction' });
    } else {
      await state.clock.sleep(1_000, signal);
    }
  }
}
