import type { ReactNode } from 'react';
import { ConsoleNav } from '@/components/console-nav';

export default function ConsoleLayout({ children }: { children: ReactNode }) {
  return (
    <div className="shell">
      <aside className="sidebar">
        <div className="brand">
          Leasehold<span>leases · locks · leaders</span>
        </div>
        <ConsoleNav />
      </aside>
      <main className="main" id="main">
        {children}
      </main>
    </div>
  );
}
