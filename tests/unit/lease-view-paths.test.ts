// A lease reaches a reader by two paths: the collector publishes its picture the moment it has
// written it (lib/domain/views.ts leaseView), and everything else reads the row it wrote
// (lib/db/lease-views.ts leaseViewOfRow). Both go through lib/domain/lease-view.ts toLeaseView,
// and for the same lease they must say the same thing (the lease list served from memory
// takes one and then the other for the same lease).
import { describe, expect, it } from 'vitest';
import { leaseRowOf } from '../../lib/db/lease-rows';
import { eventViewOfRow, leaseViewOfRow } from '../../lib/db/lease-views';
import { newTrackedLease, type LeaseChange, type TrackedLease } from '../../lib/domain/tracked-lease';
import { eventView, leaseView } from '../../lib/domain/views';
import type { Lease, LeaseEvent } from '../../lib/generated/prisma/client';

const T0 = Date.parse('2026-12-05T10:00:00.000Z');

/** A NUMERIC column as Prisma hands it over (a Decimal: only toFixed is used). */
const decimal = (text: string | null) => (text === null ? null : ({ toFixed: () => text } as unknown as Lease['token']));
const date = (iso: string | null) => (iso === null ? null : new Date(iso));
const bigintOf = (n: number | null) => (n === null ? null : BigInt(n));

/** The row as the store holds it after upsertLeases wrote leaseRowOf(lease), as Prisma reads it back. */
function stored(lease: TrackedLease): Lease {
  const r = leaseRowOf(lease);
  const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  return {
    id: r.id,
    sourceName: r.sourceName,
    backend: r.backend,
    kind: r.kind,
    key: r.key,
    state: r.state,
    holder: r.holder,
    token: decimal(r.token),
    lastHolder: r.lastHolder,
    lastToken: decimal(r.lastToken),
    fenced: r.fenced,
    ttlMs: bigintOf(r.ttlMs),
    acquiredAt: date(r.acquiredAt),
    renewedAt: date(r.renewedAt),
    expiresAt: date(r.expiresAt),
    observedAt: date(r.observedAt)!,
    stale: r.stale,
    candidates: json(r.candidates),
    transitions: r.transitions,
    lastSeq: r.lastSeq,
    renewalSeq: BigInt(r.renewalSeq),
    version: BigInt(r.version),
    lastIntervalMs: bigintOf(r.lastIntervalMs),
    lastMarginMs: bigintOf(r.lastMarginMs),
    endedAt: date(r.endedAt),
    endedCause: r.endedCause,
    problem: r.problem,
    detail: json(r.detail),
    updatedAt: new Date(T0),
  } as Lease;
}

const base = () => newTrackedLease({ source: 'pg', backend: 'postgres', startedMono: 0, startedWall: T0 }, 'lock', 'leases/weekly-digest');

const held = (): TrackedLease => ({
  ...base(),
  state: 'held',
  holder: 'worker-7:3f9a2c1b',
  token: 42n,
  lastHolder: 'worker-6:00aa11bb',
  lastToken: 41n,
  ttlMs: 5_000.4,
  // The collector's wall-clock times come from its monotonic clock: fractions of a millisecond.
  acquiredAtWall: T0 - 10_000.6,
  renewedAtWall: T0 - 1_000.2,
  expiresAtWall: T0 + 3_999.7,
  observedAtWall: T0 - 0.4,
  transitions: 3,
  lastRenewal: { intervalMs: 2_000.5, marginMs: 3_100.49 },
  candidates: [{ holder: 'worker-8:aa', token: 7n }, { holder: 'worker-9:bb', token: null }],
  detail: { table: 'leases', nested: { n: 1 } },
});

const cases: [string, () => TrackedLease][] = [
  ['held, fenced, with a countdown', held],
  ['free: the last holder and its token are shown', () => ({ ...held(), state: 'free', holder: null, token: null, expiresAtWall: null, candidates: [] })],
  ['expired', () => ({ ...held(), state: 'expired', holder: null, token: null })],
  ['held without a token (unfenced)', () => ({ ...held(), token: null, lastToken: null })],
  ['held, its source unreadable (stale: no countdown)', () => ({ ...held(), stale: true })],
  ['held without a known expiry', () => ({ ...held(), ttlMs: null, expiresAtWall: null, lastRenewal: null })],
  ['unknown, with a problem', () => ({ ...base(), state: 'unknown', problem: 'the owner column holds 3 kB of binary' })],
  ['never held', base],
];

describe('the collector\'s view and the store\'s view of a lease are one view', () => {
  it.each(cases)('%s', (_name, make) => {
    const lease = make();
    for (const now of [T0, T0 + 1_234, T0 + 60_000]) {
      const published = leaseView(lease, now);
      expect(leaseViewOfRow(stored(lease), now, null)).toEqual(published);
      // A source read earlier than the lease's own picture changes nothing.
      expect(leaseViewOfRow(stored(lease), now, new Date(T0 - 5_000))).toEqual(published);
    }
  });

  it('fenced is the token rule on both paths, whatever the row\'s column says', () => {
    const lease = held();
    expect(leaseViewOfRow({ ...stored(lease), fenced: false }, T0, null).fenced).toBe(true);
    const unfenced = { ...lease, token: null, lastToken: null };
    expect(leaseViewOfRow({ ...stored(unfenced), fenced: true }, T0, null).fenced).toBe(false);
    expect(leaseView(unfenced, T0).fenced).toBe(false);
  });

  it('observedAt: a read that saw the lease unchanged (no row written) counts on both paths', () => {
    const lease = held();
    const row = stored(lease); // written at the read that changed it
    // A later read sees it unchanged: the collector moves its picture's observedAt on
    // (lib/domain/apply-read.ts) and writes only the source's last good read.
    const laterRead = T0 + 2_000;
    const published = leaseView({ ...lease, observedAtWall: laterRead }, laterRead);
    expect(published.observedAt).toBe(new Date(laterRead).toISOString());
    expect(leaseViewOfRow(row, laterRead, new Date(laterRead))).toEqual(published);
    // A stale lease was not seen by its source's last read: its own time stands.
    const stale = { ...lease, stale: true };
    expect(leaseViewOfRow(stored(stale), laterRead, new Date(laterRead)).observedAt).toBe(leaseView(stale, laterRead).observedAt);
  });

  it('remainingMs is whole milliseconds to the expiry shown, never below 0', () => {
    const view = leaseView(held(), T0);
    expect(view.remainingMs).toBe(Date.parse(view.expiresAt!) - T0);
    expect(leaseView(held(), T0 + 10_000).remainingMs).toBe(0);
  });
});

describe('an event, published and read back, is one view', () => {
  it('the same fields from the change and from its row', () => {
    const change: LeaseChange = { type: 'acquired', atWall: T0 + 0.7, holder: 'w2', previousHolder: 'w1', token: 43n, previousToken: 42n, gapMs: 1_500, detail: { cause: 'expired' } };
    const row = {
      id: 25n,
      leaseId: 'pg/leases/weekly-digest',
      seq: 4,
      type: 'acquired',
      at: new Date(new Date(change.atWall).toISOString()),
      holder: 'w2',
      previousHolder: 'w1',
      token: decimal('43'),
      previousToken: decimal('42'),
      gapMs: 1_500n,
      detail: { cause: 'expired' },
    } as LeaseEvent;
    expect(eventViewOfRow(row)).toEqual(eventView('25', 'pg/leases/weekly-digest', change));
  });
});
