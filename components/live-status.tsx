'use client';
// Whether the page is receiving live updates, and if not, what it is waiting for: the server
// (connecting, reconnecting, for how long), or a source that cannot be read or has not been
// read yet. An engineer must know when what they see is old, and why.
import { useQuery } from '@tanstack/react-query';
import { fetchJson } from './live/api';
import { sourcesSchema } from '@/lib/domain/schemas';
import { useLiveStatus } from './live/live-stream';
import { useNow } from './live/now';
import { useSourceStatuses } from './live/source-status';
import { sourceWords } from './sources/source-words';

/** Past this, "connecting" says how long the server has not answered. */
const SLOW_MS = 3_000;

export function LiveStatus() {
  const { status, since } = useLiveStatus();
  const now = useNow(1_000);
  // The sources' status, for every page, under a key of its own: under the sources page's
  // ['sources'] its answer could reach that page before the page hydrates, and the page would
  // then draw data where the server drew its skeleton (React #418, seen on /sources in CI).
  useQuery({ queryKey: ['sources', 'for the live status'], queryFn: ({ signal }) => fetchJson('/api/v1/sources', sourcesSchema, signal) });
  const sources = useSourceStatuses();
  const started = since || (typeof performance === 'undefined' ? 0 : performance.timeOrigin);
  const waited = now && started ? Math.max(0, now - started) : 0;

  let text: string;
  let why: string | null = null;
  let waiting = false;
  if (status === 'connecting') {
    text = 'Connecting…';
    if (waited >= SLOW_MS) why = `waiting for the Leasehold server to answer, since ${new Date(started).toISOString().slice(11, 19)} UTC`;
  } else if (status === 'reconnecting') {
    text = 'Reconnecting…';
    why = `no answer from the Leasehold server since ${new Date(started).toISOString().slice(11, 19)} UTC; what you see may be behind`;
  } else {
    text = 'Live';
    // A source no longer in the config (still in the store) is nothing to wait for.
    const words = [...sources.values()].filter((source) => source.configured !== false).map((source) => sourceWords(source, now));
    const down = words.filter((w) => w.state === 'down');
    const unread = words.filter((w) => w.state === 'unread');
    if (down.length) {
      waiting = true;
      why = down.length === 1 ? `waiting for ${down[0]!.name}: ${down[0]!.steady}` : `waiting for ${down.length} sources that cannot be read: ${down.map((w) => w.name).join(', ')}`;
    } else if (unread.length) {
      waiting = true;
      why = unread.length === 1 ? `waiting for the first read of ${unread[0]!.name}` : `waiting for the first read of ${unread.length} sources`;
    } else if (words.length) {
      why = words.length === 1 ? `${words[0]!.name} ${words[0]!.steady}` : `all ${words.length} sources up`;
    }
  }
  return (
    <span className={`live-status ${status}${waiting ? ' waiting' : ''}`} role="status" aria-live="polite" data-testid="live-status" title={why ?? undefined}>
      <span className="dot" aria-hidden="true" />
      <span className="text">
        {text}
        {why ? <span className="why">{why}</span> : null}
      </span>
    </span>
  );
}
