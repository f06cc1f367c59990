// Holder telemetry in the store (lib/db/telemetry.ts), on both kinds of store: renewals add up
// per lease, holder and minute across requests; a claim keeps since when it has held without
// a break and ends with the first report that does not claim; a request naming an unknown
// lease or a time outside the window stores nothing; a lease forgotten takes its reports along.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TelemetryRefusedError } from '../../lib/domain/holder-telemetry';
import { openStore, type Store } from '../../lib/db/store';
import { Registry } from 'prom-client';
import { readHolderReports, recentHolderFigures, storeTelemetry } from '../../lib/db/telemetry';
import { holderSeries } from '../../lib/queries/metrics';
import { telemetryBodySchema, type TelemetryBody } from '../../lib/domain/schemas';
import { STORE_KINDS, type TestDatabase } from '../support/databases';

const NOW = new Date('2026-12-06T03:00:30.000Z');
const body = (reports: object[]): TelemetryBody => telemetryBodySchema.parse({ reports });
const renewal = (at: string, rttMs: number, lateMs: number | null, ok = true) => ({ at, rttMs, lateMs, ok });

describe.each(STORE_KINDS)('holder telemetry in the store: $kind', ({ create }) => {
  let db: TestDatabase;
  let store: Store;
  const leaseId = 'redis-main/lock:order:42';

  beforeAll(async () => {
    db = await create();
    store = await openStore(db.storeConfig());
    await store.prisma.source.create({ data: { name: 'redis-main', backend: 'redis' } });
    for (const id of [leaseId, 'redis-main/lock:order:43']) {
      await store.prisma.lease.create({ data: { id, sourceName: 'redis-main', backend: 'redis', kind: 'lock', key: id.slice('redis-main/'.length), state: 'held', observedAt: NOW } });
    }
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('adds renewals up per holder and minute across requests, keeps the maxima, and tells a late renewal from one that did not say', async () => {
    const first = await storeTelemetry(
      store,
      body([{ lease: leaseId, holder: 'w-1:aa', token: '18446744073709551621', claims: true, renewals: [renewal('2026-12-06T02:59:10.000Z', 2, 0), renewal('2026-12-06T03:00:05.000Z', 4, 1_200)] }]),
      NOW,
    );
    expect(first).toEqual({ reports: 1, renewals: 2 });
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-1:aa', token: '18446744073709551621', claims: true, renewals: [renewal('2026-12-06T03:00:20.000Z', 9, null, false)] }]), NOW);

    const [holder] = await readHolderReports(store, leaseId, new Date('2026-12-06T02:00:00Z'));
    expect(holder).toMatchObject({ holder: 'w-1:aa', claims: true, token: '18446744073709551621', claimsSince: NOW.toISOString() });
    expect(holder!.minutes).toEqual([
      { minute: '2026-12-06T02:59:00.000Z', count: 1, failed: 0, rttAvgMs: 2, rttMaxMs: 2, lateAvgMs: 0, lateMaxMs: 0 },
      { minute: '2026-12-06T03:00:00.000Z', count: 2, failed: 1, rttAvgMs: 6.5, rttMaxMs: 9, lateAvgMs: 1_200, lateMaxMs: 1_200 },
    ]);
  });

  it('keeps since when a holder claims while it goes on claiming, and ends the claim with the first report that does not', async () => {
    const later = new Date(NOW.getTime() + 20_000);
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-1:aa', token: '18446744073709551621', claims: true, renewals: [] }]), later);
    expect((await readHolderReports(store, leaseId, NOW))[0]).toMatchObject({ claims: true, claimsSince: NOW.toISOString(), reportedAt: later.toISOString() });
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-1:aa', token: null, claims: false, renewals: [] }]), later);
    expect((await readHolderReports(store, leaseId, NOW))[0]).toMatchObject({ claims: false, claimsSince: null, token: null });
    // Claiming again, on a new grant (another token), is a new claim from now.
    const again = new Date(later.getTime() + 5_000);
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-1:aa', token: '5', claims: true, renewals: [] }]), again);
    const newer = new Date(again.getTime() + 5_000);
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-1:aa', token: '6', claims: true, renewals: [] }]), newer);
    expect((await readHolderReports(store, leaseId, NOW))[0]).toMatchObject({ claims: true, token: '6', claimsSince: newer.toISOString() });
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-1:aa', token: '6', claims: true, renewals: [] }]), new Date(newer.getTime() + 5_000));
    expect((await readHolderReports(store, leaseId, NOW))[0]).toMatchObject({ claimsSince: newer.toISOString() });
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-1:aa', token: null, claims: false, renewals: [] }]), later);
    // Two holders of one lease are kept apart.
    await storeTelemetry(store, body([{ lease: leaseId, holder: 'w-2:bb', token: '7', claims: true, renewals: [] }]), later);
    expect((await readHolderReports(store, leaseId, NOW)).map((h) => `${h.holder} ${h.claims}`).sort()).toEqual(['w-1:aa false', 'w-2:bb true']);
  });

  it('stores nothing of a request that names an unknown lease, or a renewal outside the time window', async () => {
    const other = 'redis-main/lock:order:43';
    const good = { lease: other, holder: 'w-3:cc', token: '1', claims: true, renewals: [renewal('2026-12-06T03:00:00.000Z', 1, 0)] };
    const unknown = storeTelemetry(store, body([good, { ...good, lease: 'redis-main/lock:order:999' }]), NOW);
    await expect(unknown).rejects.toBeInstanceOf(TelemetryRefusedError);
    await expect(unknown).rejects.toMatchObject({ code: 'unknown_lease', message: expect.stringMatching(/^reports\[1\]\.lease: no lease "redis-main\/lock:order:999"/) });
    const old = storeTelemetry(store, body([good, { ...good, renewals: [renewal('2026-12-04T03:00:00.000Z', 1, 0)] }]), NOW);
    await expect(old).rejects.toMatchObject({ code: 'invalid_time', message: expect.stringMatching(/^reports\[1\]\.renewals\[0\]\.at/) });
    expect(await readHolderReports(store, other, new Date(0))).toEqual([]);
  });

  it('gives /metrics each exported lease\'s holders over the last 5 minutes: whether each claims now, renewals, failures, slowest round trip and largest lateness, within the limit', async () => {
    const other = 'redis-main/lock:order:43';
    const at = new Date(NOW.getTime() + 60_000);
    await storeTelemetry(
      store,
      body([
        { lease: other, holder: 'w-9:"odd"\\', token: '3', ttlMs: 5_000, claims: true, claimForMs: 4_000, renewals: [renewal('2026-12-06T03:01:10.000Z', 12, 800), renewal('2026-12-06T03:01:20.000Z', 30, null, false)] },
        { lease: other, holder: 'w-8:quiet', token: null, claims: false, renewals: [renewal('2026-12-06T03:01:15.000Z', 2, null)] },
      ]),
      at,
    );
    const figures = await recentHolderFigures(store, [other], new Date(at.getTime() - 300_000), new Date(at.getTime() + 1_000), 10);
    expect(figures).toEqual([
      { leaseId: other, holder: 'w-8:quiet', claims: false, renewals: 1, failed: 0, rttMaxMs: 2, lateMaxMs: null },
      { leaseId: other, holder: 'w-9:"odd"\\', claims: true, renewals: 2, failed: 1, rttMaxMs: 30, lateMaxMs: 800 },
    ]);
    // Its claim ran out (claimForMs 4 s): it claims no more, though nothing said so.
    expect((await recentHolderFigures(store, [other], new Date(0), new Date(at.getTime() + 5_000), 10)).find((f) => f.holder.startsWith('w-9'))?.claims).toBe(false);
    expect(await recentHolderFigures(store, [other], new Date(0), at, 1)).toHaveLength(1);
    const registry = new Registry();
    holderSeries(registry, figures, new Map([[other, 'redis-main']]));
    const text = await registry.metrics();
    expect(text).toContain('leasehold_lease_holder_claims{holder="w-9:\\"odd\\"\\\\",lease="redis-main/lock:order:43",source="redis-main"} 1');
    expect(text).toContain('leasehold_lease_holder_renewal_late_max_seconds{holder="w-9:\\"odd\\"\\\\",lease="redis-main/lock:order:43",source="redis-main"} 0.8');
    expect(text).toContain('leasehold_lease_holder_renewal_failures_last_5m{holder="w-9:\\"odd\\"\\\\",lease="redis-main/lock:order:43",source="redis-main"} 1');
    expect(text).not.toContain('leasehold_lease_holder_renewal_late_max_seconds{holder="w-8:quiet"');
  });

  it('a lease that is forgotten takes its holders\' reports with it', async () => {
    await store.prisma.lease.delete({ where: { id: leaseId } });
    expect(await readHolderReports(store, leaseId, new Date(0))).toEqual([]);
    expect(await store.prisma.holderRollup.count({ where: { leaseId } })).toBe(0);
  });
});
