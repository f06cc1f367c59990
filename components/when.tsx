'use client';
// A time as people on a call read it: "12 s ago" (or "in 4 s"), with the absolute UTC time on
// hover and for screen readers.
import { formatDuration } from '@/lib/domain/duration';
import { useNow } from './live/now';

export const absolute = (iso: string) => iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC');

/** "12 s ago", "in 4 s" or "just now", for an instant `sinceMs` before now (negative: ahead). */
export function relativeTime(sinceMs: number, upcoming: boolean): string {
  const justNow = sinceMs < 1_000 && sinceMs > (upcoming ? -1_000 : -2_500);
  return justNow ? 'just now' : sinceMs > 0 ? `${formatDuration(sinceMs)} ago` : `in ${formatDuration(-sinceMs)}`;
}

/**
 * `upcoming`: the instant may lie ahead (an expiry). Without it the instant has happened (a read,
 * a grant, an event): the page's clock, which ticks once a second, may still be up to a second or
 * two behind it, and it reads "just now", not "in 1.2 s". Further ahead it is shown as it is: a
 * server clock ahead of this one's.
 */
export function When({ iso, className, upcoming = false }: { iso: string | null; className?: string; upcoming?: boolean }) {
  const now = useNow(1_000);
  if (!iso) return <span className="muted">—</span>;
  const at = Date.parse(iso);
  const text = now === 0 ? absolute(iso) : relativeTime(now - at, upcoming);
  return (
    <time dateTime={iso} title={absolute(iso)} className={className}>
      {text}
    </time>
  );
}
