import type { PublicError } from '@/lib/errors';
import { EmptyState } from './ui/empty-state';

export function StoreProblem({ problem }: { problem: PublicError }) {
  return (
    <EmptyState title="The store cannot be read" tone="error">
      <p>{problem.message}</p>
      <p>
        Check <a href="/api/health">/api/health</a> and the server log. With <code>DATABASE_URL</code> set, the PostgreSQL server it
        names must be running; without it, the embedded store in <code>.leasehold/</code> is used.
      </p>
    </EmptyState>
  );
}
