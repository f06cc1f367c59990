// The console around every page: the sidebar (a top bar with a menu on a phone) and the main area.
// Used by the console's layout and by the not-found page, so an unknown address keeps the frame.
import { Suspense, type ReactNode } from 'react';
import { ConsoleNav } from '@/components/console-nav';
import { DemoCard } from '@/components/demo/demo-card';
import { LiveStatus } from '@/components/live-status';
import { MenuButton } from '@/components/menu-button';
import { Providers } from '@/components/live/live-stream';
import { ThemeToggle } from '@/components/theme-toggle';
import { UserBox } from '@/components/auth/user-box';

/** Who is looking, as the console's layout found them (none on the not-found page). */
export type FrameUser = { name: string; role: string; signedIn: boolean; links: string[]; controlsDemo: boolean };

export function ConsoleFrame({ children, user }: { children: ReactNode; user?: FrameUser | null }) {
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
          <LiveStatus />
          <MenuButton />
          {/* On a phone this folds behind the menu button; the live status stays in the bar. */}
          <div className="sidebar-menu" id="sidebar-menu">
            <Suspense>
              <ConsoleNav only={user?.links} />
            </Suspense>
            <div className="sidebar-foot">
              {user && <UserBox name={user.name} role={user.role} signedIn={user.signedIn} />}
              <DemoCard controls={user?.controlsDemo ?? false} />
              <ThemeToggle />
            </div>
          </div>
        </aside>
        <main className="main" id="main">
          {children}
        </main>
      </div>
    </Providers>
  );
}
