'use client';
// False while React hydrates what the server rendered, true after. A page whose data another
// part of the console may already have fetched (the sidebar's live status reads the sources,
// its demo card the demo) draws what the server drew until it has hydrated, then the data:
// drawing the data during hydration would not match the server's HTML (React #418).
import { useSyncExternalStore } from 'react';

const noSubscription = () => () => {};

export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}
