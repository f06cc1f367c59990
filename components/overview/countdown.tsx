'use client';
// Time left on a lease against its TTL, counting down on this browser's clock between
// updates. A stale lease shows no countdown: nobody knows how much time it has.
import { useNow } from '../live/now';
import type { LiveLease } from '../live/types';
import { formatDuration } from '@/lib/domain/duration';
import { remainingMsAt } from '@/lib/domain/countdown';

export function Countdown({ lease }: { lease: LiveLease }) {
  const now = useNow(250);
  if (lease.state !== 'held' || lease.stale || lease.localExpiresAt === null || now === 0) {
    return <span className="muted">{lease.stale && lease.state === 'held' ? 'unknown' : '—'}</span>;
  }
  const remaining = remainingMsAt(lease.localExpiresAt, now);
  const ttl = lease.ttlMs ?? remaining;
  const share = ttl > 0 ? Math.min(1, remaining / ttl) : 0;
  const tone = share < 0.25 ? 'bad' : share < 0.5 ? 'warn' : 'ok';
  return (
    <span className="countdown" title={`${formatDuration(remaining)} left of ${lease.ttlMs === null ? 'an unknown TTL' : formatDuration(lease.ttlMs)}`}>
      <span className="bar" role="meter" aria-label="Time left of the TTL" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(share * 100)}>
        <span className={`fill ${tone}`} style={{ width: `${share * 100}%` }} />
      </span>
      <span className="tabular text">{remaining === 0 ? 'due now' : formatDuration(remaining)}</span>
    </span>
  );
}
