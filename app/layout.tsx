import type { Metadata } from 'next';
import { headers } from 'next/headers';
import type { ReactNode } from 'react';
import { THEME_SCRIPT } from '@/components/theme-script';
import { NONCE_HEADER } from '@/lib/api/security-headers';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Leasehold', template: '%s · Leasehold' },
  description: 'Who holds which lease, lock and leadership, and what changed.',
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // This request's nonce (proxy.ts): the page's Content-Security-Policy runs only scripts that carry it.
  const nonce = (await headers()).get(NONCE_HEADER) ?? undefined;
  return (
    // The theme is set by the script before React hydrates: the attribute differs by design.
    <html lang="en" suppressHydrationWarning>
      <head>
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body>{children}</body>
    </html>
  );
}
