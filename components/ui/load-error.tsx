'use client';
import { ApiError } from '../live/api';
import { EmptyState } from './empty-state';

/**
 * What a page says when its data could not be loaded: the API's own sentence, whether the
 * server or the store is the one not answering, and a way to try again.
 */
export function LoadError({ title, error, onRetry, retriesItself }: { title: string; error: Error; onRetry: () => void; retriesItself: string }) {
  const unreachable = error instanceof ApiError && error.status === 0;
  return (
    <EmptyState title={title} tone="error">
      <p>{error.message}</p>
      <p>{unreachable ? `${retriesItself}; you can also retry now.` : 'The store did not answer; the server log has the details.'}</p>
      <p>
        <button type="button" className="button" onClick={onRetry}>
          Retry
        </button>
      </p>
    </EmptyState>
  );
}
