'use client';
// Filters, sorts and time ranges live in the URL, so a link carries them and a reload keeps
// them. Changes use history.replaceState, which Next's useSearchParams follows without a
// round trip to the server.
import { usePathname, useSearchParams } from 'next/navigation';
import { useCallback } from 'react';

export function useUrlState(): [URLSearchParams, (patch: Record<string, string | null>) => void] {
  const params = useSearchParams();
  const pathname = usePathname();
  const set = useCallback(
    (patch: Record<string, string | null>) => {
      const next = new URLSearchParams(window.location.search);
      for (const [name, value] of Object.entries(patch)) {
        if (value === null || value === '') next.delete(name);
        else next.set(name, value);
      }
      const query = next.toString();
      window.history.replaceState(null, '', query ? `${pathname}?${query}` : pathname);
    },
    [pathname],
  );
  return [new URLSearchParams(params.toString()), set];
}
