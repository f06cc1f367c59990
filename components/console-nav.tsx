'use client';
import Link from 'next/link';
import { usePathname, useSearchParams } from 'next/navigation';
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { fetchJson } from './live/api';
import { alertsPageSchema } from '@/lib/domain/schemas';

const LINKS = [
  { href: '/', label: 'Overview' },
  { href: '/failovers', label: 'Failovers' },
  { href: '/sources', label: 'Sources' },
  { href: '/alerts', label: 'Alerts' },
  { href: '/audit', label: 'Audit log' },
  { href: '/settings', label: 'Settings' },
] as const;

/** Read at most this many firing alerts for the count ("100+" beyond). */
const COUNT_LIMIT = 100;

/** How many alerts fire, read every 30 s (and by no one who may not read them): null until known, or when it cannot be read. */
function useFiringCount(enabled: boolean): number | null {
  // Asked two seconds after the page opens: what the page itself shows comes first (on a busy
  // or just-started server this request would compete with it, at 3 a.m., during an outage).
  const [settled, setSettled] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(true), 2_000);
    return () => clearTimeout(timer);
  }, []);
  const firing = useQuery({
    queryKey: ['alerts', 'firing, for the navigation'],
    queryFn: ({ signal }) => fetchJson(`/api/v1/alerts?state=firing&limit=${COUNT_LIMIT}`, alertsPageSchema, signal),
    enabled: enabled && settled,
    refetchInterval: 30_000,
    staleTime: 0,
  });
  return firing.data ? firing.data.alerts.length : null;
}

/** `only`: the links this person may open (all when not given). */
export function ConsoleNav({ only }: { only?: string[] }) {
  const pathname = usePathname();
  // Nobody known (the not-found page): no count, rather than a request refused.
  const firing = useFiringCount(only?.includes('/alerts') ?? false);
  // The time range travels from page to page.
  const range = useSearchParams().get('range');
  const suffix = range ? `?range=${encodeURIComponent(range)}` : '';
  return (
    <nav aria-label="Console">
      <ul className="nav">
        {LINKS.filter((link) => !only || only.includes(link.href)).map((link) => {
          const current = link.href === '/' ? pathname === '/' : pathname.startsWith(link.href);
          return (
            <li key={link.href}>
              <Link prefetch={false} href={`${link.href}${suffix}`} aria-current={current ? 'page' : undefined}>
                {link.label}
                {link.href === '/alerts' && firing ? (
                  <span className="nav-count" title={`${firing >= COUNT_LIMIT ? `${COUNT_LIMIT} or more alerts` : firing === 1 ? '1 alert' : `${firing} alerts`} firing`} data-testid="nav-firing-count">
                    {firing >= COUNT_LIMIT ? `${COUNT_LIMIT}+` : firing}
                    <span className="visually-hidden"> firing</span>
                  </span>
                ) : null}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
