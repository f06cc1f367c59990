// A source's status in words, the same on the overview, the live indicator and anywhere else
// that says it: "not read yet", "down since 21:03:12 UTC, 2 min ago: connection refused",
// or "up, read 0.4 s ago". `now` comes in as an argument.
import type { SourceStatusView } from '../live/types';
import { formatDuration } from '@/lib/domain/duration';

/** `steady`: the same without the relative time, for text read out as it changes (a live region). */
export type SourceWords = { name: string; state: 'unread' | 'down' | 'up'; text: string; steady: string };

/** HH:MM:SS UTC of an ISO instant. */
const clock = (iso: string) => `${iso.slice(11, 19)} UTC`;

export function sourceWords(source: SourceStatusView, now: number): SourceWords {
  if (source.status === 'down') {
    const since = source.downSince ?? null;
    const why = `: ${source.lastError ?? 'no answer'}`;
    if (!since) return { name: source.name, state: 'down', text: `down${why}`, steady: `down${why}` };
    return {
      name: source.name,
      state: 'down',
      text: `down since ${clock(since)}, ${formatDuration(Math.max(0, now - Date.parse(since)))} ago${why}`,
      steady: `down since ${clock(since)}${why}`,
    };
  }
  if (source.status === 'unknown' || !source.lastGoodReadAt) return { name: source.name, state: 'unread', text: 'not read yet', steady: 'not read yet' };
  const ago = Math.max(0, now - Date.parse(source.lastGoodReadAt));
  return { name: source.name, state: 'up', text: `up, read ${formatDuration(ago)} ago`, steady: 'up' };
}
