'use client';
// One clock for every countdown and "N s ago" on the page: a single timer per interval,
// shared by all the components that read it, instead of one timer per row.
import { useSyncExternalStore } from 'react';

type Clock = { subscribe: (listener: () => void) => () => void; read: () => number };
const clocks = new Map<number, Clock>();

function makeClock(intervalMs: number): Clock {
  let now = Date.now();
  let timer: ReturnType<typeof setInterval> | null = null;
  const listeners = new Set<() => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      if (!timer) {
        // A clock nobody read for a while is behind: brought up to date before it ticks again
        // (useSyncExternalStore sees the change and renders with it).
        now = Date.now();
        timer = setInterval(() => {
          now = Date.now();
          for (const l of listeners) l();
        }, intervalMs);
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
    read: () => now,
  };
}

function clock(intervalMs: number): Clock {
  let c = clocks.get(intervalMs);
  if (!c) clocks.set(intervalMs, (c = makeClock(intervalMs)));
  return c;
}

export function useNow(intervalMs = 1_000): number {
  const c = clock(intervalMs);
  return useSyncExternalStore(
    c.subscribe,
    c.read,
    () => 0, // on the server: no clock, the client fills times in
  );
}
