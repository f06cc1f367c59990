'use client';
// The failovers page: every change of holder across all leases in the chosen time range,
// as a chart by cause and a table, filtered by text and cause (both in the URL). The live
// stream invalidates ['failovers'] when a lease changes hands, so the page follows along;
// a slow refetch also slides the window forward when nothing happens.
import { useInfiniteQuery } from '@tanstack/react-query';
import { useDeferredValue, useMemo, useState, type ReactNode } from 'react';
import { fetchJson } from '@/components/live/api';
import { failoverPageSchema } from '@/lib/domain/schemas';
import { useUrlState } from '@/components/live/url-state';
import { RANGES, TimeRangePicker, useTimeRange } from '@/components/time-range';
import { EmptyState } from '@/components/ui/empty-state';
import { LoadError } from '@/components/ui/load-error';
import { formatDuration } from '@/lib/domain/duration';
import { When } from '@/components/when';
import {
  CAUSE_TEXT,
  CHANGE_TEXT,
  FAILOVER_CAUSES,
  FAILOVER_CHANGES,
  FAILOVER_KIND_TEXT,
  filterFailovers,
  isFiltered,
  parseCause,
  parseChange,
  parseLeaseKind,
  summarizeGaps,
  type FailoverRecord,
} from '@/lib/domain/failover-stats';
import { LEASE_KINDS } from '@/lib/domain/types';
import { FailoverChart } from './failover-chart';
import { FailoverTable } from './failover-table';
import styles from './failovers.module.css';
import { FailoversSkeleton } from './skeleton';

const PAGE_SIZE = 1_000;
const SLIDE_EVERY_MS = 30_000;
const count = new Intl.NumberFormat('en');

const failoversUrl = (since: string, cursor: string | null) =>
  `/api/v1/failovers?since=${encodeURIComponent(since)}&limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;

export function FailoversView() {
  const { range, setRange } = useTimeRange();
  const [params, setParams] = useUrlState();
  const [text, setText] = useState(() => params.get('q') ?? '');
  const cause = parseCause(params.get('cause'));
  const change = parseChange(params.get('change'));
  const kind = parseLeaseKind(params.get('kind'));
  const deferredText = useDeferredValue(text);
  const rangeText = range.label.replace(/^Last/, 'the last');

  const query = useInfiniteQuery({
    queryKey: ['failovers', range.value],
    queryFn: ({ pageParam, signal }) => fetchJson(failoversUrl(range.value, pageParam), failoverPageSchema, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next,
    refetchInterval: SLIDE_EVERY_MS,
  });

  // Pages are refetched one after the other; an id seen twice is shown once.
  const all = useMemo(() => {
    const byId = new Map<string, FailoverRecord>();
    for (const page of query.data?.pages ?? []) for (const failover of page.failovers) if (!byId.has(failover.id)) byId.set(failover.id, failover);
    return [...byId.values()];
  }, [query.data]);
  const filter = useMemo(() => ({ text: deferredText, cause, change, kind }), [deferredText, cause, change, kind]);
  const shown = useMemo(() => filterFailovers(all, filter), [all, filter]);
  const summary = useMemo(() => summarizeGaps(shown), [shown]);
  const filtered = isFiltered(filter);

  // The chart's window ends when the data was read, or at the newest failover if this
  // browser's clock is behind the server's.
  const newestAt = all[0] ? Date.parse(all[0].at) : Number.NaN;
  const endMs = Math.max(query.dataUpdatedAt, Number.isNaN(newestAt) ? 0 : newestAt);

  const csvParams = new URLSearchParams({ since: range.value });
  if (text.trim()) csvParams.set('q', text.trim());
  if (cause) csvParams.set('cause', cause);
  if (change) csvParams.set('change', change);
  if (kind) csvParams.set('kind', kind);
  const rangeParam = params.get('range');
  const linkSuffix = rangeParam ? `?range=${encodeURIComponent(rangeParam)}` : '';
  const wider = RANGES.filter((option) => option.ms > range.ms).slice(0, 2);

  const clearFilters = () => {
    setText('');
    setParams({ q: null, cause: null, change: null, kind: null });
  };

  let body: ReactNode;
  if (query.isPending) {
    body = <FailoversSkeleton />;
  } else if (query.isError && !query.data) {
    body = <LoadError title="Failovers could not be loaded" error={query.error} onRetry={() => void query.refetch()} retriesItself="The page tries again when the server answers" />;
  } else if (all.length === 0) {
    body = (
      <EmptyState title={`No lease changed hands in ${rangeText}`}>
        <p>Every expiry, release, takeover and forced action shows up here as it happens.</p>
        {wider.length > 0 ? (
          <p>
            Widen the time range to look further back:{' '}
            {wider.map((option) => (
              <button key={option.value} type="button" className={`button ${styles.inlineButton}`} onClick={() => setRange(option.value)}>
                {option.label}
              </button>
            ))}
          </p>
        ) : (
          <p>This is the widest range the console shows.</p>
        )}
      </EmptyState>
    );
  } else {
    body = (
      <>
        {query.isError ? (
          <p className={`warn-text ${styles.notice}`} role="alert">
            Could not refresh: {query.error.message} Showing what was read <When iso={new Date(query.dataUpdatedAt).toISOString()} />.
          </p>
        ) : null}
        <p className={styles.summary}>
          <strong className="tabular">{count.format(shown.length)}</strong> {shown.length === 1 ? 'failover' : 'failovers'}{' '}
          {filtered ? `match the filters (of ${count.format(all.length)} in ${rangeText})` : `in ${rangeText}`}
          {summary.measured > 0 ? (
            <>
              {' · '}median gap <strong className="tabular">{formatDuration(summary.medianGapMs!)}</strong>
              {' · '}max gap <strong className="tabular">{formatDuration(summary.maxGapMs!)}</strong>
              {summary.measured < summary.count ? <span className="muted"> (of the {count.format(summary.measured)} with a measured gap)</span> : null}
            </>
          ) : shown.length > 0 ? (
            <span className="muted"> · no gap measured</span>
          ) : null}
        </p>
        {query.hasNextPage ? (
          <p className={`muted ${styles.partial}`}>
            Only the newest {count.format(all.length)} failovers in this range are loaded: the chart, the numbers and the table cover those. Load more below for
            older ones.
          </p>
        ) : null}
        <FailoverChart failovers={shown} rangeMs={range.ms} endMs={endMs} rangeText={rangeText} />
        {shown.length === 0 ? (
          <EmptyState title="No failovers match the filters">
            <p>
              {count.format(all.length)} {all.length === 1 ? 'failover' : 'failovers'} in {rangeText}, none with{' '}
              {[deferredText.trim() ? `“${deferredText.trim()}” in the lease or a holder` : null, cause ? `the cause “${CAUSE_TEXT[cause]}”` : null, change ? `“${CHANGE_TEXT[change]}”` : null, kind ? `the kind “${FAILOVER_KIND_TEXT[kind]}”` : null]
                .filter(Boolean)
                .join(' and ')}
              .
            </p>
            <p>
              <button type="button" className="button" onClick={clearFilters}>
                Clear filters
              </button>
            </p>
          </EmptyState>
        ) : (
          <FailoverTable failovers={shown} linkSuffix={linkSuffix} />
        )}
        {query.hasNextPage ? (
          <div className={styles.more}>
            <button type="button" className="button" onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
              {query.isFetchingNextPage ? 'Loading older failovers…' : `Load ${count.format(PAGE_SIZE)} older failovers`}
            </button>
          </div>
        ) : null}
      </>
    );
  }

  return (
    <div className={styles.root}>
      <h1>Failovers</h1>
      <p className="subtitle">Every change of holder across all leases: expiries, releases, takeovers and forced actions, newest first.</p>
      <div className="toolbar">
        <TimeRangePicker />
        <label className="control">
          <span>Lease or holder</span>
          <input
            type="search"
            value={text}
            placeholder="e.g. weekly-digest or worker-7"
            onChange={(event) => {
              setText(event.target.value);
              setParams({ q: event.target.value });
            }}
          />
        </label>
        <label className="control">
          <span>Lease kind</span>
          <select value={kind ?? ''} onChange={(event) => setParams({ kind: event.target.value || null })}>
            <option value="">All kinds</option>
            {LEASE_KINDS.map((option) => (
              <option key={option} value={option}>
                {FAILOVER_KIND_TEXT[option]}
              </option>
            ))}
          </select>
        </label>
        <label className="control">
          <span>Cause</span>
          <select value={cause ?? ''} onChange={(event) => setParams({ cause: event.target.value || null })}>
            <option value="">All causes</option>
            {FAILOVER_CAUSES.map((option) => (
              <option key={option} value={option}>
                {CAUSE_TEXT[option]}
              </option>
            ))}
          </select>
        </label>
        <label className="control">
          <span>Taken by</span>
          <select value={change ?? ''} onChange={(event) => setParams({ change: event.target.value || null })}>
            <option value="">Any node</option>
            {FAILOVER_CHANGES.map((option) => (
              <option key={option} value={option}>
                {CHANGE_TEXT[option]}
              </option>
            ))}
          </select>
        </label>
        {filtered ? (
          <button type="button" className="button subtle" onClick={clearFilters}>
            Clear filters
          </button>
        ) : null}
        <div className={styles.export}>
          <a
            className="button"
            href={`/api/v1/failovers.csv?${csvParams.toString()}`}
            download
            data-testid="failovers-csv"
            title={`Downloads every failover in ${rangeText} that matches the filters, also those not loaded on this page`}
          >
            Export CSV
          </a>
          <span className={`muted ${styles.exportNote}`}>all in {rangeText}{filtered ? ' matching the filters' : ''}</span>
        </div>
      </div>
      {body}
    </div>
  );
}
