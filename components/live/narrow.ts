'use client';
// Whether the window is phone-sized: the same width at which app/globals.css folds the sidebar.
import { useSyncExternalStore } from 'react';

export const NARROW_QUERY = '(max-width: 760px)';

function subscribe(listener: () => void) {
  const media = window.matchMedia(NARROW_QUERY);
  media.addEventListener('change', listener);
  return () => media.removeEventListener('change', listener);
}

export function useNarrow(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => window.matchMedia(NARROW_QUERY).matches,
    () => false,
  );
}
