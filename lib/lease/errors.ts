// Typed failures of the lease client. "Unknown" is never reported as "lost": a lease is
// lost only when the backend said so; a backend that does not answer is unavailable.

/** The backend says this lease is no longer ours: it expired, was released, or was taken. */
export class LeaseLostError extends Error {
  constructor(readonly key: string, reason: string) {
    super(`the lease on "${key}" is no longer held by this client: ${reason}`);
    this.name = 'LeaseLostError';
  }
}

/** The backend could not be reached, or did not answer before the call's deadline. Nothing is known about the lease. */
export class BackendUnavailableError extends Error {
  constructor(readonly backend: string, reason: string, options?: { cause?: unknown }) {
    super(`${backend} did not answer: ${reason}`, options);
    this.name = 'BackendUnavailableError';
  }
}

/** The caller's signal fired. Carries the signal's reason as its cause. */
export class LeaseAbortedError extends Error {
  constructor(reason?: unknown) {
    super('the lease operation was cancelled', { cause: reason });
    this.name = 'AbortError';
  }
}
