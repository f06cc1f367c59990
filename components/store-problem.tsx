import type { PublicError } from '@/lib/errors';
import { EmptyState } from './ui/empty-state';

export function StoreProblem({ problem }: { problem: PublicError }) {
  return (
    <EmptyState title="The store cannot be read" tone="error">
      <p>{problem.message}</p>
      <p>
        {/* A JSON endpoint, not a page: a plain link (the rule takes any path under app/ for a page since app/api has a catch-all). */}
        {/* eslint-disable-next-line @next/next/no-html-link-for-pages */}
        Check <a href="/api/health">/api/health</a> and the server log. With <code>DATABASE_URL</code> set, the PostgreSQL server it
        names must be running; without it, the embedded store in <code>.leasehold/</code> is used.
      </p>
    </EmptyState>
  );
}
