import type { ReactNode } from 'react';
import { ConsoleFrame, type FrameUser } from '@/components/console-frame';
import { currentPrincipal } from '@/lib/auth/page';
import { can } from '@/lib/auth/permissions';

const PAGE_PERMISSIONS = [
  ['/', 'read'],
  ['/failovers', 'read'],
  ['/sources', 'read'],
  ['/alerts', 'read'],
  ['/audit', 'audit:read'],
  ['/settings', 'users:manage'],
] as const;

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const principal = await currentPrincipal();
  const user: FrameUser | null = principal && {
    name: principal.name,
    role: principal.role,
    signedIn: principal.method !== 'anonymous',
    links: PAGE_PERMISSIONS.filter(([, permission]) => can(principal.role, permission)).map(([href]) => href),
    controlsDemo: can(principal.role, 'demo:control'),
  };
  return <ConsoleFrame user={user}>{children}</ConsoleFrame>;
}
