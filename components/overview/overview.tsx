'use client';
// The overview: every lease, grouped by source, problems first, live. What an on-call
// engineer needs in five seconds: who holds what, what is stuck or flapping, which sources
// cannot be read. The list is fetched once and kept current by the live stream; a list of more
// than 10,000 leases is paged by the server instead (lease-pages.ts).
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useDeferredValue, useEffect, useMemo, useState } from 'react';
import { countLeases, marginTone, type LeaseHealth } from '@/lib/domain/health';
import { leaseIdPath } from '@/lib/domain/lease-id';
import { OVERVIEW_FIRST_READ, overviewRows, parseOverviewFilter, SORTS, STATE_FILTERS, type OverviewRow, type Sort, type StateFilter } from '@/lib/domain/overview';
import { fetchJson } from '../live/api';
import { failoverPageSchema } from '@/lib/domain/schemas';
import type { LeaseListResponse, LiveLease } from '../live/types';
import { useSourcesOnlyStream } from '../live/stream-scope';
import { loadLeaseList, useLeasePages } from './lease-pages';
import type { OverviewSnapshot } from '@/lib/queries/overview-snapshot';
import { useHydrated } from '../live/hydrated';
import { useNarrow } from '../live/narrow';
import { useNow } from '../live/now';
import { useSourceStatuses } from '../live/source-status';
import { useUrlState } from '../live/url-state';
import { EmptyState } from '../ui/empty-state';
import { LoadError } from '../ui/load-error';
import { formatDuration } from '@/lib/domain/duration';
import { When } from '../when';
import { sourceWords } from '../sources/source-words';
import { Countdown } from './countdown';
import { VirtualRows } from './virtual-rows';

const ROW_HEIGHT = 44;
/** On a phone each lease is a card of four lines, and each source a heading of two. */
const CARD_HEIGHT = 128;
const GROUP_CARD_HEIGHT = 56;
const cardHeight = (row: OverviewRow<LiveLease>) => (row.type === 'group' ? GROUP_CARD_HEIGHT : CARD_HEIGHT);
const SORT_LABELS: Record<Sort, string> = {
  problems: 'Problems first',
  key: 'Key',
  remaining: 'Remaining time',
  token: 'Token (highest first)',
  holder: 'Holder',
  transitions: 'Changes in the last hour',
};
const STATE_LABELS: Record<StateFilter, string> = {
  all: 'All states',
  problems: 'Problems only',
  held: 'Held',
  free: 'Free',
  expired: 'Expired',
  unknown: 'Unknown',
  stale: 'Stale',
};
const PROBLEM_TEXT: Record<string, string> = {
  expired: 'expired',
  stale: 'stale',
  unknown: 'unreadable value',
  late: 'late renewals',
  flapping: 'flapping',
  unfenced: 'unfenced',
  quarantined: 'quarantined after a forced action',
};

/**
 * Everything on the overview comes from the browser's own reads (the list, the live stream,
 * the clock), so the server renders its frame only and the browser renders the rest after
 * hydration: nothing the server rendered can differ from what the browser would.
 */
export function Overview({ snapshot = null }: { snapshot?: OverviewSnapshot | null }) {
  const hydrated = useHydrated();
  if (!hydrated) return <OverviewFrame snapshot={snapshot} />;
  return <LiveOverview snapshot={snapshot} />;
}

/**
 * The search box keeps what is typed in its own state and writes it to the URL as it goes.
 * Bound to the URL directly, fast typing lost letters: the URL reaches the page a render later
 * ("console-keyboard" typed, "onslkeyord" shown), found by the keyboard test.
 */
function SearchBox({ onChange }: { onChange: (text: string) => void }) {
  const [draft, setDraft] = useState(() => new URLSearchParams(window.location.search).get('q') ?? '');
  return (
    <input
      type="search"
      value={draft}
      placeholder="key or holder"
      onChange={(event) => {
        setDraft(event.target.value);
        onChange(event.target.value);
      }}
    />
  );
}

function OverviewFrame({ snapshot }: { snapshot: OverviewSnapshot | null }) {
  const states = snapshot?.states;
  return (
    <>
      <section className="counters" aria-label="Counters">
        {(['Held', 'Free', 'Expired', 'Stale', 'Failovers, 1 h', 'Sources down'] as const).map((label) => (
          <Counter key={label} label={label} value={states && label in FRAME_COUNTERS ? states[FRAME_COUNTERS[label as keyof typeof FRAME_COUNTERS]] : null} />
        ))}
      </section>
      <SourceLine sources={null} />
      <div className="toolbar" style={{ minHeight: 54 }} />
      {snapshot ? <SnapshotRows snapshot={snapshot} /> : <div className="vtable-skeleton" aria-busy="true" aria-label="Loading leases" />}
    </>
  );
}

const FRAME_COUNTERS = { Held: 'held', Free: 'free', Expired: 'expired', Stale: 'stale' } as const;

/** The column headings of the lease table on a desktop, each with what it means on hover. */
function LeaseHead() {
  return (
    <div role="row" className="lease-row lease-head">
      {[
        ['Lease', 'Key, and what kind of lease'],
        ['State', 'Held, free, expired or unknown, and what is wrong'],
        ['Holder', 'Who holds it (or held it last), and how many wait'],
        ['Token', 'The fencing token of the current grant'],
        ['Remaining', 'Time left before it expires, against its TTL'],
        ['Margin', "The last renewal's margin: time that was left, as % of the TTL"],
        ['Changes 1h', 'Changes of hands in the last hour'],
      ].map(([name, title]) => (
        <span role="columnheader" key={name} title={title}>
          {name}
        </span>
      ))}
    </div>
  );
}

/**
 * The server's first leases (lib/queries/overview-snapshot.ts), drawn before the page's
 * scripts run and until the browser's own read comes: no countdown (the browser's clock fills
 * it in), no virtualization (30 rows at most).
 */
function SnapshotRows({ snapshot }: { snapshot: OverviewSnapshot }) {
  const rows = overviewRows(
    snapshot.leases.map((lease) => ({ ...lease, localExpiresAt: null })),
    { source: null, state: 'all', text: '', sort: 'problems' },
    new Set(),
  ).rows;
  return (
    <div role="table" aria-label="Leases" aria-busy="true" className="vtable snapshot" data-testid="overview-snapshot">
      <LeaseHead />
      <div role="rowgroup" className="vtable-body">
        {rows.map((row, index) => (
          <Row
            key={row.type === 'group' ? `g:${row.source}` : row.lease.id}
            row={row}
            index={index}
            href={(id) => `/leases/${leaseIdPath(id)}`}
            sourceRead={new Map()}
            card={false}
            paged={{ totals: snapshot.sources, more: false }}
          />
        ))}
      </div>
      {snapshot.total > snapshot.leases.length ? (
        <p className="muted small" style={{ padding: '8px 12px' }}>
          The first {snapshot.leases.length} of {snapshot.total.toLocaleString('en')} leases; the rest as the page loads.
        </p>
      ) : null}
    </div>
  );
}

function LiveOverview({ snapshot }: { snapshot: OverviewSnapshot | null }) {
  const [params, setParams] = useUrlState();
  const filter = parseOverviewFilter(params);
  const text = useDeferredValue(filter.text);
  // The search box starts again from the URL when the URL changes under it (back, forward, clear).
  const [searchGeneration, setSearchGeneration] = useState(0);
  useEffect(() => {
    const onPop = () => setSearchGeneration((g) => g + 1);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const leases = useQuery({ queryKey: ['leases'], queryFn: ({ signal }) => loadLeaseList(OVERVIEW_FIRST_READ, signal) });
  // More leases than the first read holds: the server filters, sorts and pages them, and the
  // stream carries only the sources' messages.
  const large = leases.data?.truncated === true;
  useSourcesOnlyStream(large);
  const pages = useLeasePages(filter, filter.text, large);
  const failovers = useQuery({
    queryKey: ['failovers', 'last-hour-count'],
    queryFn: ({ signal }) => fetchJson('/api/v1/failovers?since=1h&limit=1000', failoverPageSchema, signal),
    // Without the stream's events to say when it changed.
    refetchInterval: large ? 10_000 : false,
  });

  const unfiltered = !filter.source && filter.state === 'all' && !filter.text.trim();
  // Until the first page comes, the first read stands in for it when it is that page (no filter, problems first).
  const firstReadIsPage = unfiltered && filter.sort === 'problems';
  const data = large ? pagedList(pages.data?.pages, firstReadIsPage ? leases.data : undefined) : leases.data;
  // Keyed by the names down, not the sources' objects (their last reads move every second).
  const downKey = (data?.sources ?? [])
    .filter((s) => s.status === 'down')
    .map((s) => s.name)
    .join('\u0000');
  const downSources = useMemo(() => new Set(downKey ? downKey.split('\u0000') : []), [downKey]);
  const live = useSourceStatuses();
  const sourceRead = useMemo(() => new Map((data?.sources ?? []).map((s) => [s.name, (live.get(s.name) ?? s).lastGoodReadAt])), [data?.sources, live]);
  // Order changes with the data (twice a second at most), not with every clock tick.
  const { rows, shown } = useMemo(
    // Paged: the server chose and ordered them (its state filter keeps stale leases of that state, docs/api.md); this groups them by source.
    () => overviewRows(data?.leases ?? [], large ? { ...filter, source: null, state: 'all', text: '' } : { ...filter, text }, downSources),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the filter's fields are listed one by one
    [data?.leases, large, filter.source, filter.state, filter.sort, text, downSources],
  );
  const counted = useMemo(() => countLeases(large ? [] : (data?.leases ?? [])), [large, data?.leases]);
  const counters = large && data?.counts ? data.counts.states : counted;
  // Until the browser's own read comes, the server's snapshot's.
  const shownCounters = data ? counters : (snapshot?.states ?? null);
  const allLeases = large && data?.counts ? Object.values(data.counts.sources).reduce((sum, n) => sum + n, 0) : (data?.leases.length ?? 0);
  const paged: Paged | null = large ? { totals: unfiltered ? (data?.counts?.sources ?? null) : null, more: pages.hasNextPage } : null;
  const nearEnd = () => {
    if (large && pages.hasNextPage && !pages.isFetchingNextPage) void pages.fetchNextPage();
  };

  // Another node taking over, and a node taking its own lease back after a restart, told apart.
  const restarts = failovers.data ? failovers.data.failovers.filter((f) => f.restart).length : 0;
  const more = failovers.data?.next ? '+' : '';
  const failoverCount = failovers.data ? `${failovers.data.failovers.length - restarts}${more}` : '…';
  const sourcesDown = downSources.size;
  const range = params.get('range');
  const narrow = useNarrow();
  const leaseHref = (id: string) => `/leases/${leaseIdPath(id)}${range ? `?range=${encodeURIComponent(range)}` : ''}`;

  return (
    <>
      <section className="counters" aria-label="Counters">
        {/* Green says "held, and we can see it": never for none, and stale leases are counted apart. */}
        <Counter label="Held" value={shownCounters?.held ?? null} tone={shownCounters?.held ? 'ok' : undefined} />
        <Counter label="Free" value={shownCounters?.free ?? null} />
        <Counter label="Expired" value={shownCounters?.expired ?? null} tone={shownCounters?.expired ? 'bad' : undefined} />
        <Counter label="Stale" value={shownCounters?.stale ?? null} tone={shownCounters?.stale ? 'warn' : undefined} />
        <Counter
          label="Failovers, 1 h"
          testId="failovers-last-hour"
          title="Changes of holder to another node in the last hour; a node that took its own lease back after a restart is counted apart"
          value={failovers.data ? failoverCount : null}
          note={restarts ? `+${restarts}${more} restart${restarts === 1 ? '' : 's'}` : undefined}
          href="/failovers"
        />
        <Counter label="Sources down" value={data ? sourcesDown : null} tone={sourcesDown ? 'bad' : undefined} href="/sources" />
      </section>

      <SourceLine sources={data?.sources ?? null} />

      <div className="toolbar" role="search">
        <label className="control">
          <span>Search leases and holders</span>
          <SearchBox key={searchGeneration} onChange={(q) => setParams({ q })} />
        </label>
        <label className="control">
          <span>Source</span>
          <select value={filter.source ?? ''} onChange={(event) => setParams({ source: event.target.value || null })}>
            <option value="">All sources</option>
            {(data?.sources ?? []).map((source) => (
              <option key={source.name} value={source.name}>
                {source.name}
              </option>
            ))}
            {filter.source && !data?.sources.some((s) => s.name === filter.source) ? <option value={filter.source}>{filter.source}</option> : null}
          </select>
        </label>
        <label className="control">
          <span>State</span>
          <select value={filter.state} onChange={(event) => setParams({ state: event.target.value === 'all' ? null : event.target.value })}>
            {STATE_FILTERS.map((state) => (
              <option key={state} value={state}>
                {STATE_LABELS[state]}
              </option>
            ))}
          </select>
        </label>
        <label className="control">
          <span>Sort</span>
          <select value={filter.sort} onChange={(event) => setParams({ sort: event.target.value === 'problems' ? null : event.target.value })}>
            {SORTS.map((sort) => (
              <option key={sort} value={sort}>
                {SORT_LABELS[sort]}
              </option>
            ))}
          </select>
        </label>
        <span className="muted tabular" aria-live="polite" data-testid="lease-count">
          {!data
            ? ''
            : large
              ? pages.isPlaceholderData
                ? 'Reading the leases that match…'
                : `${shown.toLocaleString('en')}${pages.hasNextPage ? '+' : ''} of ${(data.total ?? 0).toLocaleString('en')} matching, ${allLeases.toLocaleString('en')} leases${pages.isRefetchError ? ' (could not read them again: shown as last read)' : pages.isFetching ? ' (reading…)' : ''}`
              : `${shown.toLocaleString('en')} of ${allLeases.toLocaleString('en')} leases`}
        </span>
      </div>

      {leases.isError ? (
        <LoadError title="The leases cannot be loaded" error={leases.error} onRetry={() => void leases.refetch()} retriesItself="Live updates resume when the server answers" />
      ) : large && pages.isError && !pages.data ? (
        <LoadError title="This page of leases cannot be read" error={pages.error} onRetry={() => void pages.refetch()} retriesItself="It is read again every few seconds" />
      ) : !data ? (
        snapshot ? <SnapshotRows snapshot={snapshot} /> : <div className="vtable-skeleton" aria-busy="true" aria-label="Loading leases" />
      ) : allLeases === 0 ? (
        data.sources.length === 0 ? (
          <EmptyState title="No leases yet: no sources are configured">
            <p>
              Leasehold watches the PostgreSQL, Redis and etcd sources listed in <code>leasehold.config.json</code>. Copy{' '}
              <code>leasehold.config.example.json</code> to <code>leasehold.config.json</code>, name your sources, and restart.
            </p>
          </EmptyState>
        ) : (
          <EmptyState title="No leases in the store yet">
            <p>
              {data.sources.length === 1 ? 'One source is' : `${data.sources.length} sources are`} configured (
              {data.sources.map((s) => s.name).join(', ')}). Leases appear here once they have been read; see <Link prefetch={false} href="/sources">Sources</Link> for
              whether they can be.
            </p>
          </EmptyState>
        )
      ) : rows.length === 0 ? (
        <EmptyState title={filter.source && !data.sources.some((s) => s.name === filter.source) ? `No source is named “${filter.source}”` : 'No lease matches these filters'}>
          <p>
            <button
              type="button"
              className="button"
              onClick={() => {
                setParams({ q: null, source: null, state: null });
                setSearchGeneration((g) => g + 1);
              }}
            >
              Clear the filters
            </button>
          </p>
        </EmptyState>
      ) : (
        <VirtualRows
          label="Leases"
          rows={rows}
          rowCount={shown}
          onNearEnd={nearEnd}
          rowHeight={narrow ? cardHeight : ROW_HEIGHT}
          height={narrow ? 'calc(100dvh - 120px)' : 'calc(100vh - 380px)'}
          header={
            narrow ? (
              <div role="row" className="lease-card-head">
                <span role="columnheader">Leases, {SORT_LABELS[filter.sort].toLowerCase()}</span>
              </div>
            ) : (
            <LeaseHead />
            )
          }
          render={(row, index) => (
            <Row key={row.type === 'group' ? `g:${row.source}` : row.lease.id} row={row} index={index} href={leaseHref} sourceRead={sourceRead} card={narrow} paged={paged} />
          )}
        />
      )}
    </>
  );
}

/**
 * What the sources say, in one box of fixed height: each source as "not read yet", "down since
 * … (why)" or "up, read N s ago", live (the stream tells each read), the down ones first.
 */
function SourceLine({ sources }: { sources: LeaseListResponse['sources'] | null }) {
  const live = useSourceStatuses();
  const now = useNow(500);
  if (!sources) {
    return (
      <p className="source-line" data-testid="source-line">
        <span className="muted">Reading the list of sources…</span>
      </p>
    );
  }
  if (sources.length === 0) {
    return (
      <p className="source-line" data-testid="source-line">
        <span className="muted">No sources configured.</span>
      </p>
    );
  }
  const current = sources.map((source) => live.get(source.name) ?? source);
  const words = current.map((source) => sourceWords(source, now));
  const down = words.filter((w) => w.state === 'down');
  const unread = words.filter((w) => w.state === 'unread');
  const up = words.filter((w) => w.state === 'up');
  const title = words.map((w) => `${w.name}: ${w.text}`).join('\n');
  // Several sources up are summed up by the oldest read: the one that matters.
  const oldestRead = Math.min(...current.filter((s) => s.status === 'up' && s.lastGoodReadAt).map((s) => Date.parse(s.lastGoodReadAt!)));
  const upText = up.length === 0 ? null : up.length <= 2 ? up.map((w) => `${w.name} ${w.text}`).join('; ') : `${up.length} sources up, the oldest read ${formatDuration(Math.max(0, now - oldestRead))} ago`;
  const rest = [
    ...unread.map((w) => `${w.name} ${w.text}`),
    ...(upText ? [upText] : []),
  ].join('; ');
  if (down.length === 0) {
    return (
      <p className={`source-line${unread.length ? '' : ' ok'}`} data-testid="source-line" title={title}>
        <span>{rest}.</span>
      </p>
    );
  }
  return (
    <p className="source-line down" role="alert" data-testid="source-down-banner" title={title}>
      <span>
        <strong>
          {down.length === sources.length ? (sources.length === 1 ? 'The source cannot be read' : `None of the ${sources.length} sources can be read`) : `${down.length} of ${sources.length} sources cannot be read`}:
        </strong>{' '}
        {down.map((w, index) => (
          <span className="item" key={w.name}>
            <b>{w.name}</b> {w.text}
            {index < down.length - 1 ? '; ' : '. '}
          </span>
        ))}
        <span className="item">
          Their leases are marked stale and nothing about them is guessed{rest ? `; ${rest}` : ''}. <Link prefetch={false} href="/sources">Sources</Link>
        </span>
      </span>
    </p>
  );
}

function Counter({
  label,
  testId,
  title,
  value,
  tone,
  href,
  note,
}: {
  label: string;
  testId?: string;
  title?: string;
  value: number | string | null;
  tone?: 'ok' | 'warn' | 'bad';
  href?: string;
  note?: string;
}) {
  const body = (
    <>
      <span className="value">
        {value === null ? '…' : typeof value === 'number' ? value.toLocaleString('en') : value}
        {note ? <span className="note"> {note}</span> : null}
      </span>
      <span className="label">{label}</span>
    </>
  );
  return (
    <div className={`counter${tone ? ` ${tone}` : ''}`} title={title} data-testid={`counter-${testId ?? label.toLowerCase().replace(/[^a-z]+/g, '-')}`}>
      {href ? (
        <Link prefetch={false} href={href} className="counter-link">
          {body}
        </Link>
      ) : (
        body
      )}
    </div>
  );
}

function Row({
  row,
  index,
  href,
  sourceRead,
  card,
  paged,
}: {
  row: OverviewRow<LiveLease>;
  index: number;
  href: (id: string) => string;
  sourceRead: Map<string, string | null>;
  card: boolean;
  /** A list paged by the server: each source's leases in all (unfiltered; null when filtered), and whether more pages remain. */
  paged: Paged | null;
}) {
  if (row.type === 'group') {
    return (
      <div role="row" aria-rowindex={index + 2} className={`lease-group${row.down ? ' down' : ''}${card ? ' card' : ''}`} data-testid="source-group" data-source={row.source}>
        <span role="cell">
          <strong>{row.source}</strong> <span className="muted">{row.backend}</span> · <GroupCount count={row.count} paged={paged} source={row.source} />
          {row.problems ? <span className="bad-text"> · {row.problems.toLocaleString('en')} with problems</span> : null}
          {row.down ? (
            <span className="bad-text">
              {' '}
              · source down, last read <When iso={sourceRead.get(row.source) ?? null} />
            </span>
          ) : null}
        </span>
      </div>
    );
  }
  const { lease, health } = row;
  const read = sourceRead.get(lease.source) ?? lease.observedAt;
  const flapping = health.problems.includes('flapping') ? ' bad-text' : '';
  // One lease, two layouts: a row of columns on a desktop, a card of four lines on a phone.
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      className={`${card ? 'lease-card' : 'lease-row'}${health.problems.length ? ' has-problem' : ''}${lease.stale ? ' stale' : ''}`}
      data-testid="lease-row"
      data-lease-id={lease.id}
      data-state={lease.state}
      data-stale={lease.stale ? 'true' : 'false'}
    >
      <span role="cell" className={`mono key${card ? ' card-key' : ''}`} title={lease.id}>
        {/* A long key is cut in its path, not its name: "pixly.leases/fl…/server-13", not "pixly.leases/fleet/ser…". */}
        <Link prefetch={false} href={href(lease.id)}>
          <span className="key-path">{lease.key.slice(0, lease.key.lastIndexOf('/') + 1)}</span>
          <span className="key-name">{lease.key.slice(lease.key.lastIndexOf('/') + 1)}</span>
        </Link>
        <span className="muted kind">{lease.kind}</span>
      </span>
      <span role="cell" className={card ? 'card-state' : undefined}>
        <StateBadge lease={lease} health={health} sourceRead={read} />
      </span>
      {card ? (
        <span role="cell" className="card-remaining">
          <Countdown lease={lease} />
        </span>
      ) : null}
      <span role="cell" className={`mono${card ? ' card-holder' : ''}`} title={lease.holder ?? (lease.lastHolder ? `last held by ${lease.lastHolder}` : undefined)} data-testid="lease-holder">
        {lease.holder ?? (lease.lastHolder ? <span className="muted">was {lease.lastHolder}</span> : <span className="muted">{card ? 'no holder' : '—'}</span>)}
        {lease.candidates.length ? <span className="muted"> +{lease.candidates.length} waiting</span> : null}
      </span>
      {card ? (
        <span role="cell" className="card-foot small">
          <span className="mono tabular" data-testid="lease-token">
            {lease.token !== null ? `token ${lease.token}` : lease.state === 'held' ? <span className="warn-text">unfenced</span> : <span className="muted">no token</span>}
          </span>
          <span className="muted"> · margin </span>
          <Margin lease={lease} health={health} />
          <span className="muted"> · changes 1h </span>
          <span className={`tabular${flapping}`} data-testid="lease-changes">
            {lease.recentTransitions ?? '—'}
          </span>
        </span>
      ) : (
        <>
          <span role="cell" className="mono tabular" data-testid="lease-token">
            {lease.token ?? (lease.state === 'held' ? <span className="warn-text">unfenced</span> : <span className="muted">—</span>)}
          </span>
          <span role="cell">
            <Countdown lease={lease} />
          </span>
          <span role="cell" className="tabular">
            <Margin lease={lease} health={health} />
          </span>
          <span role="cell" className={`tabular${flapping}`} data-testid="lease-changes">
            {lease.recentTransitions ?? '—'}
          </span>
        </>
      )}
    </div>
  );
}

function StateBadge({ lease, health, sourceRead }: { lease: LiveLease; health: LeaseHealth; sourceRead: string | null }) {
  const tone = lease.stale ? 'warn' : lease.state === 'held' ? 'ok' : lease.state === 'expired' ? 'bad' : lease.state === 'unknown' ? 'warn' : 'muted';
  const extra = health.problems.filter((p) => p !== 'stale' && p !== 'expired' && p !== 'unknown').map((p) => PROBLEM_TEXT[p]);
  return (
    <span className="state-cell">
      <span className={`badge ${tone}`} title={lease.problem ?? undefined}>
        {lease.state}
      </span>
      {lease.stale ? (
        <span className="warn-text small">
          stale · read <When iso={sourceRead} />
        </span>
      ) : extra.length ? (
        <span className="warn-text small">{extra.join(', ')}</span>
      ) : null}
    </span>
  );
}

function Margin({ lease, health }: { lease: LiveLease; health: LeaseHealth }) {
  if (health.marginPercent === null) return <span className="muted">—</span>;
  return (
    <span className={`${marginTone(health)}-text`} title={`Renewed with ${formatDuration(lease.lastMarginMs ?? 0)} left of a ${formatDuration(lease.ttlMs ?? 0)} TTL, ${formatDuration(lease.lastIntervalMs ?? 0)} after the renewal before`}>
      {Math.round(health.marginPercent)}% left
    </span>
  );
}

type Paged = { totals: Record<string, number> | null; more: boolean };

/** How many leases a source's heading counts: of a paged list, how many of them are read so far. */
function GroupCount({ count, paged, source }: { count: number; paged: Paged | null; source: string }) {
  const leases = `${count.toLocaleString('en')} lease${count === 1 ? '' : 's'}`;
  if (!paged) return <>{leases}</>;
  const total = paged.totals?.[source];
  if (total !== undefined && total > count) return <>{`${count.toLocaleString('en')} of ${total.toLocaleString('en')} leases read${paged.more ? '; scroll for more' : ''}`}</>;
  return <>{paged.more ? `${leases} read; scroll for more` : leases}</>;
}

/** The pages read so far as one list (a lease that moved between two pages once), with the newest page's counts and sources; the first read until a page comes. */
function pagedList(pages: LeaseListResponse[] | undefined, first: LeaseListResponse | undefined): LeaseListResponse | undefined {
  if (!pages?.length) return first;
  const seen = new Set<string>();
  const leases: LiveLease[] = [];
  for (const page of pages)
    for (const lease of page.leases) {
      if (seen.has(lease.id)) continue;
      seen.add(lease.id);
      leases.push(lease);
    }
  const last = pages.at(-1)!;
  return { ...pages[0]!, leases, counts: last.counts ?? pages[0]!.counts, sources: last.sources };
}
