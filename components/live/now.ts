'use client';
// One clock for every countdown and "N s ago" on the page: a single timer per interval,
// shared by all the components that read it, instead of one timer per row.
import { useSyncExternalStore } from 'react';

type Clock = { now: number; listeners: Set<() => void>; timer: ReturnType<typeof setInterval> | null };
const clocks = new Map<number, Clock>();

function clock(intervalMs: number): Clock {
  let c = clocks.get(intervalMs);
  if (!c) clocks.set(intervalMs, (c = { now: Date.now(), listeners: new Set(), timer: null }));
  return c;
}

export function useNow(intervalMs = 1_000): number {
  const c = clock(intervalMs);
  return useSyncExternalStore(
    (listener) => {
      c.listeners.add(listener);
      c.timer ??= setInterval(() => {
        c.now = Date.now();
        for (const l of c.listeners) l();
      }, intervalMs);
      return () => {
        c.listeners.delete(listener);
        if (c.listeners.size === 0 && c.timer) {
          clearInterval(c.timer);
          c.timer = null;
        }
      };
    },
    () => c.now,
    () => 0, // on the server: no clock, the client fills times in
  );
}
