import { describe, expect, it } from 'vitest';
import { applyToLease, hasCountdown, listChangeOf, reduceLeaseList, type ListedLease, type ListMessage } from './lease-list';

type L = ListedLease & { holder: string | null };
const lease = (id: string, extra: Partial<L> = {}): L => ({
  id,
  source: id.split('/')[0]!,
  stale: false,
  observedAt: '2026-12-04T10:00:00.000Z',
  remainingMs: 5_000,
  recentTransitions: 0,
  holder: 'w1',
  ...extra,
});
const leaseMsg = (l: L): ListMessage<L> => ({ type: 'lease', lease: l });
const event = (leaseId: string, type: string, holder: string | null, previousHolder: string | null, detail: Record<string, unknown> | null = null): ListMessage<L> => ({
  type: 'event',
  event: { leaseId, at: '2026-12-04T10:00:01.000Z', type: type as never, holder, previousHolder, detail },
});
const source = (name: string, status: string): ListMessage<L> => ({ type: 'source', source: { name, status } });

describe('what a stream message does to a lease list', () => {
  it.each([
    ['a first sighting', event('r/a', 'acquired', 'w1', null, { firstSeen: true }), 'none'],
    ['an acquisition after nobody held it', event('r/a', 'acquired', 'w1', null), 'none'],
    ['the same holder again after an expiry', event('r/a', 'acquired', 'w1', 'w1', { cause: 'expired' }), 'none'],
    ['a release', event('r/a', 'released', null, 'w1'), 'none'],
    ['an acquisition from another holder (a failover)', event('r/a', 'acquired', 'w2', 'w1', { cause: 'expired' }), 'change_of_hands'],
    ['a takeover', event('r/a', 'taken_over', 'w2', 'w1'), 'change_of_hands'],
    ['a source down', source('r', 'down'), 'source_status'],
    ['a source up', source('r', 'up'), 'source_status'],
    ['a source whose status is not known', source('r', 'unknown'), 'none'],
    ['a lease', leaseMsg(lease('r/a')), 'replace'],
  ])('%s: %s', (_, message, kind) => {
    expect(listChangeOf(message).kind).toBe(kind);
  });
});

describe('reduceLeaseList', () => {
  const list = [lease('r/a', { recentTransitions: 2 }), lease('r/b'), lease('p/c')];

  it('a lease message replaces the listed lease and keeps its count of changes of hands when the message has none', () => {
    const next = reduceLeaseList(list, [leaseMsg(lease('r/a', { holder: 'w2', recentTransitions: null }))]);
    expect(next[0]).toMatchObject({ holder: 'w2', recentTransitions: 2 });
    expect(next[1]).toBe(list[1]);
  });

  it('a lease not listed joins the list, with no changes of hands known', () => {
    const next = reduceLeaseList(list, [leaseMsg(lease('r/new', { recentTransitions: null }))]);
    expect(next.map((l) => l.id)).toEqual(['r/a', 'r/b', 'p/c', 'r/new']);
    expect(next[3]!.recentTransitions).toBe(0);
  });

  it('counts changes of hands, not first sightings; an event of a lease not listed adds nothing', () => {
    const next = reduceLeaseList(list, [
      event('r/b', 'acquired', 'w1', null, { firstSeen: true }),
      event('r/b', 'taken_over', 'w2', 'w1'),
      event('r/b', 'acquired', 'w3', 'w2', { cause: 'expired' }),
      event('r/zz', 'taken_over', 'w2', 'w1'),
    ]);
    expect(next[1]!.recentTransitions).toBe(2);
    expect(next).toHaveLength(3);
  });

  it('a source down marks its leases stale with no countdown, and only its own; up again unmarks them', () => {
    const down = reduceLeaseList(list, [source('r', 'down')]);
    expect(down.map((l) => [l.id, l.stale, l.remainingMs])).toEqual([
      ['r/a', true, null],
      ['r/b', true, null],
      ['p/c', false, 5_000],
    ]);
    expect(down[2]).toBe(list[2]);
    const up = reduceLeaseList(down, [source('r', 'up')]);
    expect(up.map((l) => l.stale)).toEqual([false, false, false]);
  });

  it('applies messages in order: a lease seen after its source came back is not marked by the earlier down', () => {
    const next = reduceLeaseList(list, [source('r', 'down'), leaseMsg(lease('r/a', { stale: false, recentTransitions: null }))]);
    expect(next[0]).toMatchObject({ stale: false, remainingMs: 5_000, recentTransitions: 2 });
    expect(next[1]!.stale).toBe(true);
  });

  it('onlyNewer keeps a listed lease whose picture is newer than the message', () => {
    const newer = [lease('r/a', { observedAt: '2026-12-04T10:00:09.000Z', holder: 'w9' })];
    expect(reduceLeaseList(newer, [leaseMsg(lease('r/a', { holder: 'old' }))], { onlyNewer: true })[0]!.holder).toBe('w9');
    expect(reduceLeaseList(newer, [leaseMsg(lease('r/a', { holder: 'old' }))])[0]!.holder).toBe('old');
  });

  it('returns the same array when nothing changed (a source already up, an unknown status, a release)', () => {
    expect(reduceLeaseList(list, [source('r', 'up'), source('p', 'unknown'), event('r/a', 'released', null, 'w1')])).toBe(list);
  });

  it('applyToLease returns the same object for a lease a change does not concern', () => {
    const l = list[2]!;
    expect(applyToLease(l, { kind: 'source_status', source: 'r', stale: true })).toBe(l);
    expect(applyToLease(l, { kind: 'change_of_hands', leaseId: 'r/a', atMs: 0 })).toBe(l);
  });
});

describe('hasCountdown', () => {
  it.each([
    ['held, read, expiry known', 'held', false, true, true],
    ['held but its source is down', 'held', true, true, false],
    ['held with no expiry (an advisory lock)', 'held', false, false, false],
    ['expired', 'expired', false, true, false],
    ['free', 'free', false, false, false],
  ])('%s', (_, state, stale, expiryKnown, expected) => {
    expect(hasCountdown(state as string, stale as boolean, expiryKnown as boolean)).toBe(expected);
  });
});
