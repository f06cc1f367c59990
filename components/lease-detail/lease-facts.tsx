'use client';
// What the lease is now: holder, token, time left (on this browser's own clock), the last
// renewal, the queue, and the backend's own facts. Everything a backend reported is shown as
// text (React escapes it); nothing here is ever injected as HTML.
import type { ReactNode } from 'react';
import { useNow } from '@/components/live/now';
import { useSourceStatuses } from '@/components/live/source-status';
import type { LeaseDetail } from '@/components/live/types';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { formatDuration } from '@/lib/domain/duration';
import { remainingMsAt } from '@/lib/domain/countdown';
import { When } from '@/components/when';
import { FLAPPING_TRANSITIONS, LATE_MARGIN_RATIO, leaseHealth, marginTone, type Problem } from '@/lib/domain/health';
import type { LeaseState } from '@/lib/domain/types';
import styles from './lease-detail.module.css';

const STATE_TONE: Record<LeaseState, BadgeTone> = { held: 'ok', free: 'muted', expired: 'bad', unknown: 'warn' };
const PROBLEM_TONE: Record<Problem, BadgeTone> = { expired: 'bad', stale: 'warn', unknown: 'warn', late: 'bad', flapping: 'warn', unfenced: 'warn', quarantined: 'warn' };
const PROBLEM_TEXT: Record<Problem, string> = {
  expired: 'expired',
  stale: 'stale',
  unknown: 'unknown value',
  late: 'late renewal',
  flapping: 'flapping',
  unfenced: 'unfenced',
  quarantined: 'quarantined: held by Leasehold after a forced action',
};

export function StateBadges({ lease }: { lease: LeaseDetail }) {
  const health = leaseHealth(lease);
  return (
    <span className={styles.badges}>
      <span data-testid="lease-state" data-state={lease.state} data-stale={lease.stale ? 'true' : 'false'}>
        <Badge tone={lease.stale ? 'warn' : STATE_TONE[lease.state]}>{lease.stale ? `${lease.state} · stale` : lease.state}</Badge>
      </span>
      {lease.stale ? (
        <span className="warn-text" style={{ fontSize: 13 }}>
          last read <When iso={lease.observedAt} />
        </span>
      ) : null}
      {health.problems
        .filter((p) => p !== 'stale' && p !== lease.state)
        .map((problem) => (
          <Badge key={problem} tone={PROBLEM_TONE[problem]}>
            {PROBLEM_TEXT[problem]}
          </Badge>
        ))}
    </span>
  );
}

/** Time left before expiry: localExpiresAt - now, on the browser's clock (never the server's wall clock). */
function Remaining({ lease }: { lease: LeaseDetail }) {
  const now = useNow(250);
  // An advisory lock, or an ephemeral node whose session holds it (ZooKeeper): no expiry of its own.
  if ((lease.kind === 'advisory' || typeof lease.detail?.session === 'string') && lease.ttlMs === null) {
    return <span className="muted">no expiry: held while the session lives</span>;
  }
  if (lease.state !== 'held') return <span className="muted">—</span>;
  if (lease.stale) {
    return (
      <span className="warn-text">
        unknown: source not read since <When iso={lease.observedAt} />
      </span>
    );
  }
  if (lease.localExpiresAt === null) return <span className="muted">unknown</span>;
  if (now === 0) {
    // Before the first tick in the browser: the same room, no number yet.
    return (
      <>
        <span className={styles.big}>…</span>
        <div className={styles.bar} aria-hidden="true" />
      </>
    );
  }
  const remaining = remainingMsAt(lease.localExpiresAt, now);
  const ratio = lease.ttlMs ? Math.min(1, remaining / lease.ttlMs) : null;
  const tone = remaining === 0 ? 'bad' : ratio !== null && ratio < LATE_MARGIN_RATIO ? 'warn' : 'ok';
  return (
    <>
      <span className={`${styles.big} tabular ${tone === 'bad' ? 'bad-text' : tone === 'warn' ? 'warn-text' : ''}`} data-testid="lease-remaining">
        {remaining === 0 ? '0 s' : formatDuration(remaining)}
      </span>
      {remaining === 0 ? <span className={styles.sub}>expiry due: waiting for the next read</span> : null}
      {ratio !== null ? (
        <div
          className={styles.bar}
          role="meter"
          aria-label="Remaining share of the TTL"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(ratio * 100)}
          aria-valuetext={`${Math.round(ratio * 100)}% of the TTL left`}
        >
          <div className={`${styles.barFill} ${tone === 'bad' ? styles.barBad : tone === 'warn' ? styles.barWarn : ''}`} style={{ width: `${ratio * 100}%` }} />
        </div>
      ) : null}
    </>
  );
}

/**
 * The last read of the source that saw the lease: what the API said, moved on by the live
 * stream's word of each read of that source (a lease that does not change is not sent again).
 * A stale lease keeps the time it was last seen.
 */
function LastRead({ lease }: { lease: LeaseDetail }) {
  const source = useSourceStatuses().get(lease.source);
  const read = !lease.stale && source?.status === 'up' && source.lastGoodReadAt && source.lastGoodReadAt > lease.observedAt ? source.lastGoodReadAt : lease.observedAt;
  return (
    <span data-testid="lease-last-read">
      <When iso={read} className={lease.stale ? 'warn-text' : undefined} />
    </span>
  );
}

function Fact({ label, children, wide }: { label: string; children: ReactNode; wide?: boolean }) {
  return (
    <div className={`${styles.fact}${wide ? ` ${styles.wide}` : ''}`}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function LeaseFacts({ lease }: { lease: LeaseDetail }) {
  const health = leaseHealth(lease);
  const held = lease.state === 'held';
  const tone = marginTone(health);
  const marginClass = tone === 'muted' ? 'muted' : `${tone}-text`;
  const flapping = (lease.recentTransitions ?? 0) >= FLAPPING_TRANSITIONS;
  return (
    <dl className={styles.facts} aria-label="Current state of the lease">
      <Fact label={held ? 'Holder' : 'Holder (last)'}>
        <span className={styles.big} data-testid="lease-holder">
          {lease.holder ?? '—'}
        </span>
        {!held && lease.lastHolder ? <span className={`${styles.sub} mono`}>last held by {lease.lastHolder}</span> : null}
      </Fact>
      <Fact label={held ? 'Fencing token' : 'Token (last grant)'}>
        <span className={`${styles.big}${held && lease.token === null ? ' warn-text' : ''}`} data-testid="lease-token">
          {lease.token ?? (held ? 'unfenced' : '—')}
        </span>
        {held && lease.token === null ? <span className={styles.sub}>the backend keeps no token: late writes cannot be rejected</span> : null}
      </Fact>
      <Fact label="TTL">
        <span className={styles.big}>{lease.ttlMs === null ? '—' : formatDuration(lease.ttlMs)}</span>
        {lease.ttlMs === null && lease.kind === 'advisory' ? <span className={styles.sub}>session-bound</span> : null}
      </Fact>
      <Fact label="Remaining">
        <Remaining lease={lease} />
      </Fact>
      <Fact label="Acquired">
        <When iso={lease.acquiredAt} />
        {held && lease.acquiredAt === null ? <span className={styles.sub}>before Leasehold first saw it</span> : null}
      </Fact>
      <Fact label="Last renewed">
        <When iso={lease.renewedAt} />
        {lease.lastIntervalMs !== null ? <span className={styles.sub}>{formatDuration(lease.lastIntervalMs)} after the one before</span> : null}
      </Fact>
      <Fact label="Last renewal margin">
        {health.marginPercent === null ? (
          <span className="muted">—</span>
        ) : (
          <span className={`${styles.big} ${marginClass}`} data-testid="lease-margin" data-renewal={health.renewal}>
            {Math.round(health.marginPercent)}% of TTL
          </span>
        )}
        {lease.lastMarginMs !== null && health.marginPercent !== null ? (
          <span className={styles.sub}>
            {formatDuration(lease.lastMarginMs)} left before it{health.renewal === 'late' ? ` (late: under ${Math.round(LATE_MARGIN_RATIO * 100)}%)` : ''}
          </span>
        ) : null}
      </Fact>
      <Fact label="Changes of hands, last hour">
        <span className={`${styles.big}${flapping ? ' warn-text' : ''}`} data-testid="lease-changes">
          {lease.recentTransitions ?? '—'}
        </span>
        <span className={styles.sub}>{lease.transitions} transitions (grants, ends, takeovers) since first seen</span>
      </Fact>
      <Fact label="Last read">
        <LastRead lease={lease} />
        {lease.expiresAt && held && !lease.stale ? (
          <span className={styles.sub}>
            expiry <When iso={lease.expiresAt} upcoming /> by the collector’s clock
          </span>
        ) : null}
      </Fact>
      {lease.problem ? (
        <Fact label="Problem" wide>
          <span className="warn-text">{lease.problem}</span>
        </Fact>
      ) : null}
      {lease.kind === 'election' || lease.kind === 'advisory' || lease.candidates.length > 0 ? (
        <Fact label={lease.kind === 'election' ? 'Candidates, in order' : 'Waiters, in order'} wide>
          {lease.candidates.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <ol className={styles.candidates} data-testid="lease-candidates">
              {lease.candidates.map((candidate, index) => (
                <li key={`${index}:${candidate.holder}`}>
                  {candidate.holder}
                  {candidate.token !== null ? <span className="muted"> · token {candidate.token}</span> : null}
                </li>
              ))}
            </ol>
          )}
        </Fact>
      ) : null}
    </dl>
  );
}

/** A value the backend reported, as one line of text: strings as they are, the rest as JSON. */
function show(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value, null, Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null) ? undefined : 1).replace(/\n\s*/g, ' ');
  } catch {
    return String(value);
  }
}

/** `title`: how a person names the lease's backend (its descriptor's title, handed down by the page). */
export function BackendDetail({ lease, title }: { lease: LeaseDetail; title: string }) {
  const entries = Object.entries(lease.detail ?? {});
  return (
    <section aria-labelledby="backend-detail-title">
      <h2 className={styles.panelTitle} id="backend-detail-title">
        {title} detail
      </h2>
      {entries.length === 0 ? (
        <p className="muted" style={{ margin: 0, fontSize: 13 }}>
          The backend reports nothing more about this lease.
        </p>
      ) : (
        <dl className={styles.kv} data-testid="lease-detail-values">
          {entries.map(([key, value]) => (
            <div key={key} style={{ display: 'contents' }}>
              <dt>{key}</dt>
              <dd>{show(value)}</dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}

/** The lease exactly as the API gave it (without the browser's own countdown field), as escaped text. */
export function RawValues({ lease }: { lease: LeaseDetail }) {
  const { localExpiresAt: _local, events: _events, ...api } = lease;
  return (
    <section aria-labelledby="raw-values-title">
      <h2 className={styles.panelTitle} id="raw-values-title">
        Raw values
      </h2>
      <details className={styles.raw}>
        <summary>Show the lease as the API returns it (JSON)</summary>
        <pre data-testid="lease-raw">{JSON.stringify(api, null, 2)}</pre>
      </details>
    </section>
  );
}
