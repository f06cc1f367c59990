import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { THEME_SCRIPT } from '@/components/theme-script';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Leasehold', template: '%s · Leasehold' },
  description: 'Who holds which lease, lock and leadership, and what changed.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    // The theme is set by the script before React hydrates: the attribute differs by design.
    <html lang="en" suppressHydrationWarning>
      <head>
        <script dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body>{children}</body>
    </html>
  );
}
