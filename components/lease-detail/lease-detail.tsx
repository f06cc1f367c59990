'use client';
// The lease page: what the lease is now (kept current by the live stream), then its history
// over the chosen range: fencing tokens, renewals, holders and events.
import Link from 'next/link';
import { useMemo } from 'react';
import { HolderChart } from '@/components/charts/holder-chart';
import { holderMinutesOf, RenewalChart } from '@/components/charts/renewal-chart';
import type { ChartState } from '@/components/charts/chart-frame';
import { formatTick } from '@/components/charts/time-axis';
import { TokenChart } from '@/components/charts/token-chart';
import { ApiError } from '@/components/live/api';
import { useNow } from '@/components/live/now';
import type { LeaseDetail } from '@/components/live/types';
import { useUrlState } from '@/components/live/url-state';
import { DEFAULT_RANGE, parseRange, rangeCovering, RangeDefaultProvider, TimeRangePicker } from '@/components/time-range';
import { holderTimeline, tokenPoints, tokenSummary } from '@/lib/domain/holder-timeline';
import { ActionPanel, type LeaseAbilities } from './action-panel';
import { EventTable } from './event-table';
import { HolderTimelineView } from './holder-timeline';
import { BackendDetail, LeaseFacts, RawValues, StateBadges } from './lease-facts';
import styles from './lease-detail.module.css';
import { RANGE_EVENT_LIMIT, useLease, useRangeEvents, useRenewals } from './queries';
import { LeaseLoadFailed, LeaseNotFound, LeaseSkeleton, MalformedLeaseId } from './states';

const KIND_TEXT = { lock: 'lock', election: 'leader election', advisory: 'advisory lock' } as const;

/** `backendTitles`: how a person names each backend kind (from the descriptors, lib/sources/backends.ts). */
export function LeaseDetailView({ id, abilities = { fenced: false, unfenced: false }, backendTitles = {} }: { id: string; abilities?: LeaseAbilities; backendTitles?: Readonly<Record<string, string>> }) {
  const lease = useLease(id);
  // Without ?range= the page shows what was observed of the lease (at least 15 minutes): known
  // once the lease has loaded, and the history waits for it. A range in the URL starts at once.
  const [params] = useUrlState();
  const explicit = params.get('range');
  const now = useNow(60_000);
  const firstSeen = lease.data?.firstSeenAt ? Date.parse(lease.data.firstSeenAt) : null;
  const fallback = firstSeen !== null && now ? rangeCovering(now - firstSeen) : DEFAULT_RANGE;
  const known = explicit !== null || lease.data !== undefined;
  const range = parseRange(explicit, fallback);
  const events = useRangeEvents(id, range.value, known);
  const renewals = useRenewals(id, range.value, lease.data?.state === 'held' && !lease.data.stale, known);

  if (lease.isPending) return <LeaseSkeleton id={id} />;
  if (!lease.data) {
    const error = lease.error;
    const status = error instanceof ApiError ? error.status : 0;
    if (status === 404) return <LeaseNotFound id={id} range={range.value} />;
    if (status === 400) return <MalformedLeaseId input={id} message={error?.message ?? 'The id is malformed.'} range={range.value} />;
    return <LeaseLoadFailed id={id} status={status} message={error?.message ?? 'Unknown error.'} onRetry={() => void lease.refetch()} range={range.value} />;
  }
  return (
    <RangeDefaultProvider value={fallback}>
      <Loaded
        lease={lease.data}
        refreshError={lease.isError ? lease.error.message : null}
        events={events}
        renewals={renewals}
        rangeValue={range.value}
        rangeMs={range.ms}
        rangeLabel={range.label}
        abilities={abilities}
        backendTitle={backendTitles[lease.data.backend] ?? lease.data.backend}
      />
    </RangeDefaultProvider>
  );
}

function Loaded({
  lease,
  refreshError,
  events,
  renewals,
  rangeValue,
  rangeMs,
  rangeLabel,
  abilities,
  backendTitle,
}: {
  abilities: LeaseAbilities;
  backendTitle: string;
  lease: LeaseDetail;
  refreshError: string | null;
  events: ReturnType<typeof useRangeEvents>;
  renewals: ReturnType<typeof useRenewals>;
  rangeValue: string;
  rangeMs: number;
  rangeLabel: string;
}) {
  // The range goes back to the overview only when it was chosen (in the URL), not when it is this page's own default.
  const [params] = useUrlState();
  const chosen = params.get('range');
  const overview = chosen && chosen === rangeValue ? `/?range=${encodeURIComponent(chosen)}` : '/';
  return (
    <>
      <p className={styles.crumbs}>
        <Link prefetch={false} href={overview}>Overview</Link> / lease
      </p>
      <div className={styles.titleRow}>
        <h1 className={styles.leaseId}>{lease.id}</h1>
        <StateBadges lease={lease} />
      </div>
      <p className={styles.subtitle}>
        <span>
          source <b className="mono">{lease.source}</b>
        </span>
        <span>
          backend <b>{backendTitle}</b>
        </span>
        <span>
          kind <b>{KIND_TEXT[lease.kind] ?? lease.kind}</b>
        </span>
        <span>
          key <b className="mono">{lease.key}</b>
        </span>
      </p>
      {refreshError ? (
        <p className={styles.banner} role="alert">
          Could not refresh this lease: {refreshError} Showing the last state received.
        </p>
      ) : null}
      <section className="panel" aria-label="Current state">
        <LeaseFacts lease={lease} />
        <div className={styles.split}>
          <BackendDetail lease={lease} title={backendTitle} />
          <RawValues lease={lease} />
        </div>
      </section>
      <ActionPanel lease={lease} abilities={abilities} />
      <History lease={lease} events={events} renewals={renewals} rangeMs={rangeMs} rangeLabel={rangeLabel} />
      <div className={styles.section}>
        <EventTable id={lease.id} />
      </div>
    </>
  );
}

function stateOf(query: { isPending: boolean; isError: boolean; error: Error | null; data: unknown }): ChartState {
  if (query.isPending) return { kind: 'loading' };
  if (query.isError && query.data === undefined) return { kind: 'error', message: `Could not load: ${query.error?.message ?? 'unknown error'}` };
  return { kind: 'ready' };
}

function History({
  lease,
  events,
  renewals,
  rangeMs,
  rangeLabel,
}: {
  lease: LeaseDetail;
  events: ReturnType<typeof useRangeEvents>;
  renewals: ReturnType<typeof useRenewals>;
  rangeMs: number;
  rangeLabel: string;
}) {
  // The range ends now. The browser's clock may differ from the server's a little: the end
  // is never before the newest thing the server sent, so nothing falls off the right edge.
  const tick = useNow(10_000);
  const list = events.data?.events;
  const newest = Math.max(
    tick,
    events.data?.fetchedAt ?? 0,
    renewals.dataUpdatedAt,
    list && list.length > 0 ? Date.parse(list.at(-1)!.at) : 0,
    Date.parse(lease.observedAt) || 0,
  );
  const end = newest;
  const truncated = events.data?.truncated ?? false;
  // When the range holds more events than were fetched, the history starts at the oldest fetched.
  const start = truncated && list && list.length > 0 ? Math.max(end - rangeMs, Date.parse(list[0]!.at)) : end - rangeMs;

  const points = useMemo(() => tokenPoints(list ?? []), [list]);
  const timelineLease = useMemo(
    () => ({ state: lease.state, holder: lease.holder, token: lease.token, acquiredAt: lease.acquiredAt, observedAt: lease.observedAt, stale: lease.stale }),
    [lease.state, lease.holder, lease.token, lease.acquiredAt, lease.observedAt, lease.stale],
  );
  const timeline = useMemo(() => (list ? holderTimeline(list, timelineLease, start, end) : null), [list, timelineLease, start, end]);

  const eventsState = stateOf(events);
  const renewalsState = stateOf(renewals);
  const truncatedNote = truncated ? `Only the newest ${RANGE_EVENT_LIMIT.toLocaleString('en')} events of the range are drawn: from ${formatTick(start, rangeMs)} UTC.` : undefined;
  const renewalEmpty =
    lease.kind === 'advisory' && lease.ttlMs === null
      ? 'Advisory locks are held for a session and never renewed: there is nothing to chart.'
      : lease.state === 'held'
        ? 'No renewal observed in this range yet.'
        : 'No renewals in this range.';

  return (
    <>
      <div className={styles.rangeBar}>
        <TimeRangePicker />
        <span className={styles.rangeNote}>
          Governs the charts, the holder timeline and the event table: {rangeLabel.toLowerCase()}.
          {events.isFetching && !events.isPending ? ' Updating…' : ''}
        </span>
      </div>
      <div className={styles.charts}>
        <div className="panel">
          <TokenChart
            points={points}
            start={start}
            end={end}
            summary={tokenSummary(points)}
            state={
              eventsState.kind === 'ready' && points.length === 0 && lease.token === null && !lease.fenced
                ? { kind: 'empty', message: 'This lease is unfenced: its backend keeps no fencing token.' }
                : eventsState
            }
            note={truncatedNote}
          />
        </div>
        <div className="panel">
          <RenewalChart
            samples={renewals.data?.samples ?? []}
            rollups={renewals.data?.rollups ?? []}
            ttlMs={lease.ttlMs}
            start={start}
            end={end}
            state={renewalsState}
            emptyMessage={renewalEmpty}
            holderMinutes={holderMinutesOf(renewals.data?.holders ?? [])}
          />
        </div>
        {/* Only for a lease whose holders report (POST /api/v1/telemetry): most do not. */}
        {renewals.data && renewals.data.holders.length > 0 ? (
          <div className="panel">
            <HolderChart holders={renewals.data.holders} start={start} end={end} state={renewalsState} />
          </div>
        ) : null}
      </div>
      <div className={styles.section}>
        <HolderTimelineView
          timeline={timeline}
          loading={events.isPending}
          error={eventsState.kind === 'error' ? eventsState.message : null}
          note={truncatedNote}
        />
      </div>
    </>
  );
}
