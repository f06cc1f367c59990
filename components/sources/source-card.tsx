'use client';
import Link from 'next/link';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { formatDuration } from '@/lib/domain/duration';
import { When } from '@/components/when';
import type { SourceRow } from '@/lib/queries/console';
import { BackendDetail } from './backend-detail';
import { CanaryPanel } from './canary-panel';
import styles from './sources.module.css';

const STATUS_TONE: Record<SourceRow['status'], BadgeTone> = { up: 'ok', down: 'bad', unknown: 'muted' };

/** How long the last read took against how often it runs: a read as long as the interval means the source cannot keep up. */
function PollTiming({ lastPollMs, pollMs, down }: { lastPollMs: number | null; pollMs: number | null; down: boolean }) {
  if (lastPollMs === null) return <span className="muted">no read yet{pollMs ? `, every ${formatDuration(pollMs)}` : ''}</span>;
  // A failed read's time is how long it took to fail, not how long reads take.
  if (down) return <span className="muted tabular">last attempt failed after {formatDuration(lastPollMs)}</span>;
  const share = pollMs ? lastPollMs / pollMs : null;
  const tone = share === null ? '' : share >= 1 ? 'bad-text' : share >= 0.5 ? 'warn-text' : '';
  return (
    <span className={styles.poll}>
      <span className={`tabular ${tone}`}>
        {formatDuration(lastPollMs)} per read{pollMs ? `, every ${formatDuration(pollMs)}` : ''}
      </span>
      {share !== null ? (
        <span
          className={styles.meter}
          role="meter"
          aria-label="Read time as a share of the poll interval"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(Math.min(1, share) * 100)}
        >
          <span className={`${styles.meterFill} ${share >= 1 ? styles.meterBad : share >= 0.5 ? styles.meterWarn : ''}`} style={{ width: `${Math.max(2, Math.min(100, share * 100))}%` }} />
        </span>
      ) : null}
      {share !== null && share >= 1 ? <span className="bad-text"> reads take longer than the interval</span> : null}
    </span>
  );
}

/** `readAt`: when the page read the sources (the canary chart's last hour ends then). */
export function SourceCard({ source, readAt }: { source: SourceRow; readAt: number }) {
  const titleId = `source-${source.name}`;
  return (
    <article
      className={`panel ${styles.card} ${source.status === 'down' ? styles.cardDown : ''}`}
      data-testid="source-card"
      data-source={source.name}
      data-status={source.status}
      aria-labelledby={titleId}
    >
      <header className={styles.cardHeader}>
        <h2 id={titleId} className={`mono ${styles.name}`}>
          {source.name}
        </h2>
        <Badge tone={STATUS_TONE[source.status] ?? 'muted'}>{source.status}</Badge>
        {source.configured ? null : <Badge tone="warn">no longer configured</Badge>}
        <span className={`muted ${styles.backend}`}>{source.title}</span>
      </header>

      {source.configured ? null : (
        <p className={styles.note}>
          This source is no longer in <code>leasehold.config.json</code>: Leasehold stopped reading it. What was recorded about it is kept.
        </p>
      )}
      {source.status === 'down' ? (
        <div className={styles.down}>
          <strong>Cannot read this source:</strong> {source.lastError ?? 'the collector recorded no reason.'}
          <div className={styles.downNote}>
            Its leases are shown as stale with what was last read
            {source.lastGoodReadAt ? (
              <>
                {' '}
                (<When iso={source.lastGoodReadAt} />)
              </>
            ) : null}
            ; Leasehold reports no expiry or takeover it did not see.
          </div>
        </div>
      ) : null}
      {source.status === 'up' && source.lastError ? (
        <div className={styles.partly} data-testid="source-partly">
          <strong>Not all of this source is shown as it is:</strong> {source.lastError}
          <div className={styles.downNote}>Leases of a part that cannot be read are shown stale with what was last read; the rest of the source is read as usual.</div>
        </div>
      ) : null}
      {source.status === 'unknown' && source.configured ? (
        <p className={styles.note}>Not read yet: no collector has reported on this source. Is a collector running?</p>
      ) : null}

      <dl className={styles.facts}>
        <div className={styles.fact}>
          <dt>Target</dt>
          <dd className={`mono ${styles.target}`}>{source.target || <span className="muted">—</span>}</dd>
        </div>
        <div className={styles.fact}>
          <dt>Last good read</dt>
          <dd>{source.lastGoodReadAt ? <When iso={source.lastGoodReadAt} /> : <span className="muted">never</span>}</dd>
        </div>
        <div className={styles.fact}>
          <dt>Poll</dt>
          <dd>
            <PollTiming lastPollMs={source.lastPollMs} pollMs={source.pollMs} down={source.status === 'down'} />
          </dd>
        </div>
        <div className={styles.fact}>
          <dt>Leases</dt>
          <dd>
            <Link prefetch={false} href={`/?source=${encodeURIComponent(source.name)}`} data-testid="source-leases">
              {source.leases} {source.leases === 1 ? 'lease' : 'leases'}
            </Link>
          </dd>
        </div>
        <div className={styles.fact}>
          <dt>Collector</dt>
          <dd className="mono">{source.collector ?? <span className="muted">none yet</span>}</dd>
        </div>
      </dl>

      <BackendDetail source={source} />
      {source.canary ? <CanaryPanel source={source.name} canary={source.canary} now={readAt} /> : null}
    </article>
  );
}
