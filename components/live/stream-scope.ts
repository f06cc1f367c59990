'use client';
// What the tab's live stream carries. Every message by default; while a page shows a lease
// list too large to keep whole (the overview past 10,000 leases reads it a page at a time and
// again every few seconds), only the sources' messages: a browser need not take every renewal
// of 100,000 leases to show 50 of them.
import { useEffect } from 'react';

export type StreamScope = 'all' | 'sources';

let sourcesOnly = 0;
const listeners = new Set<() => void>();

export function streamScope(): StreamScope {
  return sourcesOnly > 0 ? 'sources' : 'all';
}

/** Called when the scope changes; returns the unsubscribe. */
export function onStreamScope(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** While `active`, the stream carries only sources' messages. */
export function useSourcesOnlyStream(active: boolean): void {
  useEffect(() => {
    if (!active) return;
    const before = streamScope();
    sourcesOnly++;
    if (streamScope() !== before) for (const listener of listeners) listener();
    return () => {
      sourcesOnly--;
      if (streamScope() !== 'sources') for (const listener of listeners) listener();
    };
  }, [active]);
}
