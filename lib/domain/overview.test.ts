import { describe, expect, it } from 'vitest';
import { countLeases, leaseHealth } from './health';
import { overviewRows, parseOverviewFilter, type OverviewFilter } from './overview';
import type { LeaseView } from './types';

const NOW = 1_800_000_000_000;

function lease(over: Partial<LeaseView & { localExpiresAt: number | null }> & { key: string }): LeaseView & { localExpiresAt: number | null } {
  const source = over.source ?? 'redis-main';
  return {
    id: `${source}/${over.key}`,
    source,
    backend: 'redis',
    kind: 'lock',
    state: 'held',
    holder: 'worker-1',
    lastHolder: null,
    token: '10',
    fenced: true,
    ttlMs: 30_000,
    remainingMs: 20_000,
    acquiredAt: null,
    renewedAt: null,
    expiresAt: null,
    observedAt: new Date(NOW).toISOString(),
    stale: false,
    candidates: [],
    transitions: 1,
    recentTransitions: 0,
    lastIntervalMs: 10_000,
    lastMarginMs: 20_000,
    problem: null,
    detail: null,
    localExpiresAt: NOW + 20_000,
    ...over,
  };
}

describe('leaseHealth', () => {
  it.each([
    ['a healthy held lease', lease({ key: 'a' }), [], 'good'],
    ['an expired lease', lease({ key: 'a', state: 'expired', holder: null, lastMarginMs: null }), ['expired'], 'none'],
    ['a stale lease', lease({ key: 'a', stale: true }), ['stale'], 'good'],
    ['a late renewal (under 25% of the TTL left)', lease({ key: 'a', lastMarginMs: 5_000 }), ['late'], 'late'],
    ['exactly 25% left is not late', lease({ key: 'a', lastMarginMs: 7_500 }), [], 'good'],
    ['etcd: 1 s of 6 s left may be 2 s (whole-second TTLs): not late', lease({ key: 'a', backend: 'etcd', ttlMs: 6_000, lastMarginMs: 1_000 }), [], 'good'],
    ['etcd: no time left is late even a second off', lease({ key: 'a', backend: 'etcd', ttlMs: 6_000, lastMarginMs: 0 }), ['late'], 'late'],
    ['redis: 1 s of 6 s left is late', lease({ key: 'a', ttlMs: 6_000, lastMarginMs: 1_000 }), ['late'], 'late'],
    ['flapping: 4 changes of hands in the hour', lease({ key: 'a', recentTransitions: 4 }), ['flapping'], 'good'],
    ['a held lease without a token is unfenced', lease({ key: 'a', token: null }), ['unfenced'], 'good'],
    ['a free lease without a token is no problem', lease({ key: 'a', state: 'free', holder: null, token: null, lastMarginMs: null }), [], 'none'],
    ['an uninterpretable value', lease({ key: 'a', state: 'unknown', lastMarginMs: null }), ['unknown'], 'none'],
    ['held by the quarantine holder after a forced action', lease({ key: 'a', holder: 'leasehold:quarantine' }), ['quarantined'], 'good'],
    ['a fenced lease in a quarantine that holds no token (ZooKeeper) is not unfenced', lease({ key: 'a', holder: 'leasehold:quarantine', token: null, fenced: true }), ['quarantined'], 'good'],
    ['an unfenced lease in quarantine (ShedLock) stays unfenced', lease({ key: 'a', holder: 'leasehold:quarantine', token: null, fenced: false }), ['unfenced', 'quarantined'], 'good'],
    ['a holder that only looks like it is not quarantined', lease({ key: 'a', holder: 'leasehold:quarantine:x' }), [], 'good'],
  ] as const)('%s', (_name, input, problems, renewal) => {
    const health = leaseHealth(input);
    expect(health.problems).toEqual(problems);
    expect(health.renewal).toBe(renewal);
  });

  it('gives the margin as a share of the TTL', () => {
    expect(leaseHealth(lease({ key: 'a', lastMarginMs: 15_000 })).marginPercent).toBe(50);
  });
});

describe('overviewRows', () => {
  const leases = [
    lease({ key: 'b-fine' }),
    lease({ key: 'a-fine' }),
    lease({ key: 'c-expired', state: 'expired', holder: null, lastHolder: 'worker-9', lastMarginMs: null, localExpiresAt: null }),
    lease({ key: 'late', lastMarginMs: 1_000, holder: 'slow-renewer' }),
    lease({ key: 'job', source: 'pg-main', backend: 'postgres', token: '99', localExpiresAt: NOW + 5_000 }),
    lease({ key: 'stale-one', source: 'etcd-main', backend: 'etcd', stale: true }),
  ];
  const all: OverviewFilter = { source: null, state: 'all', text: '', sort: 'problems' };
  const keys = (filter: OverviewFilter, down = new Set<string>()) =>
    overviewRows(leases, filter, down).rows.map((row) => (row.type === 'group' ? `[${row.source}]` : row.lease.key));

  it.each([
    ['problems first: the group with the worst problem first, then its leases by problem', all, ['[redis-main]', 'c-expired', 'late', 'a-fine', 'b-fine', '[etcd-main]', 'stale-one', '[pg-main]', 'job']],
    ['by key: groups by name', { ...all, sort: 'key' }, ['[etcd-main]', 'stale-one', '[pg-main]', 'job', '[redis-main]', 'a-fine', 'b-fine', 'c-expired', 'late']],
    ['one source', { ...all, source: 'pg-main' }, ['[pg-main]', 'job']],
    ['only problems', { ...all, state: 'problems' }, ['[redis-main]', 'c-expired', 'late', '[etcd-main]', 'stale-one']],
    ['held excludes stale leases', { ...all, state: 'held', sort: 'key' }, ['[pg-main]', 'job', '[redis-main]', 'a-fine', 'b-fine', 'late']],
    ['stale', { ...all, state: 'stale' }, ['[etcd-main]', 'stale-one']],
    ['text matches the holder, case-insensitively', { ...all, text: 'SLOW' }, ['[redis-main]', 'late']],
    ['text matches the last holder of a free lease', { ...all, text: 'worker-9' }, ['[redis-main]', 'c-expired']],
    ['text matching nothing', { ...all, text: 'nothing-like-this' }, []],
    ['by remaining time: soonest first, none last', { ...all, sort: 'remaining', source: 'redis-main' }, ['[redis-main]', 'a-fine', 'b-fine', 'late', 'c-expired']],
  ] as const)('%s', (_name, filter, expected) => {
    expect(keys(filter)).toEqual(expected);
  });

  it('orders tokens as numbers of any size, highest first', () => {
    const big = [lease({ key: 'x', token: '9' }), lease({ key: 'y', token: '123456789012345678901' }), lease({ key: 'z', token: null })];
    const rows = overviewRows(big, { ...all, sort: 'token' }, new Set()).rows;
    expect(rows.flatMap((row) => (row.type === 'lease' ? [row.lease.key] : []))).toEqual(['y', 'x', 'z']);
  });

  it('marks a group whose source is down', () => {
    const rows = overviewRows(leases, all, new Set(['etcd-main'])).rows;
    expect(rows.find((row) => row.type === 'group' && row.source === 'etcd-main')).toMatchObject({ down: true, count: 1, problems: 1 });
  });
});

describe('parseOverviewFilter', () => {
  it.each([
    ['defaults', '', { source: null, state: 'all', text: '', sort: 'problems' }],
    ['every field', 'source=pg&state=expired&q=job&sort=remaining', { source: 'pg', state: 'expired', text: 'job', sort: 'remaining' }],
    ['unknown values fall back to the defaults', 'state=bogus&sort=%3Cscript%3E', { source: null, state: 'all', text: '', sort: 'problems' }],
  ] as const)('%s', (_name, query, expected) => {
    expect(parseOverviewFilter(new URLSearchParams(query))).toEqual(expected);
  });
});

describe('countLeases', () => {
  it('counts stale apart from their state, and problems across states', () => {
    const counters = countLeases([
      lease({ key: 'a' }),
      lease({ key: 'b', state: 'free', holder: null, lastMarginMs: null }),
      lease({ key: 'c', state: 'expired', holder: null, lastMarginMs: null }),
      lease({ key: 'd', stale: true }),
    ]);
    expect(counters).toEqual({ held: 1, free: 1, expired: 1, stale: 1, problems: 2 });
  });
});
