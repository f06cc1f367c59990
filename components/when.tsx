'use client';
// A time as people on a call read it: "12 s ago" (or "in 4 s"), with the absolute UTC time on
// hover and for screen readers.
import { useNow } from './live/now';

export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${(abs / 1_000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  if (abs < 3_600_000) return `${Math.floor(abs / 60_000)} min ${Math.floor((abs % 60_000) / 1_000)} s`;
  if (abs < 86_400_000) return `${Math.floor(abs / 3_600_000)} h ${Math.floor((abs % 3_600_000) / 60_000)} min`;
  return `${Math.floor(abs / 86_400_000)} d ${Math.floor((abs % 86_400_000) / 3_600_000)} h`;
}

export const absolute = (iso: string) => iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC');

export function When({ iso, className }: { iso: string | null; className?: string }) {
  const now = useNow(1_000);
  if (!iso) return <span className="muted">—</span>;
  const at = Date.parse(iso);
  const diff = now - at;
  const text = now === 0 ? absolute(iso) : Math.abs(diff) < 1_000 ? 'just now' : diff > 0 ? `${formatDuration(diff)} ago` : `in ${formatDuration(diff)}`;
  return (
    <time dateTime={iso} title={absolute(iso)} className={className}>
      {text}
    </time>
  );
}
