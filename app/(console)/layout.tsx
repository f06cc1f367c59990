import { Suspense, type ReactNode } from 'react';
import { ConsoleNav } from '@/components/console-nav';
import { DemoCard } from '@/components/demo/demo-card';
import { LiveStatus } from '@/components/live-status';
import { Providers } from '@/components/live/live-stream';
import { ThemeToggle } from '@/components/theme-toggle';

export default function ConsoleLayout({ children }: { children: ReactNode }) {
  return (
    <Providers>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <div className="shell">
        <aside className="sidebar">
          <div className="brand">
            Leasehold<span>leases · locks · leaders</span>
          </div>
          <Suspense>
            <ConsoleNav />
          </Suspense>
          <div className="sidebar-foot">
            <DemoCard />
            <LiveStatus />
            <ThemeToggle />
          </div>
        </aside>
        <main className="main" id="main">
          {children}
        </main>
      </div>
    </Providers>
  );
}
