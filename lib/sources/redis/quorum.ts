// Redlock quorum judgement: one key as several instances hold it. Held when a majority of
// all instances hold it with the same value; unknown when those that did not answer could
// tip it either way; the detail says on how many instances and by whom.
import { displayText } from '../../domain/display';
import { unreadableObservation, type Observation } from '../../domain/observe';
import type { RedisSourceState } from './instances';
import { holderOf, tokenOf, type KeyRead } from './keys';

/** `views`: one entry per instance (undefined: it did not answer); `present`: those in which the key exists. */
export function judgeQuorum(state: RedisSourceState, key: string, views: (KeyRead | undefined)[], present: KeyRead[]): Observation {
  const { instances, quorum } = state;
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
