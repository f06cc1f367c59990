'use client';
import Link from 'next/link';
import { usePathname, useSearchParams } from 'next/navigation';

const LINKS = [
  { href: '/', label: 'Overview' },
  { href: '/failovers', label: 'Failovers' },
  { href: '/sources', label: 'Sources' },
  { href: '/alerts', label: 'Alerts' },
  { href: '/audit', label: 'Audit log' },
  { href: '/settings', label: 'Settings' },
] as const;

/** `only`: the links this person may open (all when not given). */
export function ConsoleNav({ only }: { only?: string[] }) {
  const pathname = usePathname();
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
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
