'use client';
import { useState, type FormEvent } from 'react';
import { apiErrorSchema, principalSchema } from '@/lib/domain/schemas';
import { ApiError, sendJson } from '../live/api';

type Props = { next: string; oidcLabel: string | null; error: string | null; current: string | null };

/** The server's own sentence when it refused, else its status. */
function refusal(error: unknown): string {
  if (!(error instanceof ApiError) || error.status === 0) return 'The server cannot be reached.';
  if (error.code === 'unexpected_answer') return error.message;
  const said = apiErrorSchema.pick({ message: true }).safeParse(error.body);
  return said.success ? said.data.message : `Signing in failed (HTTP ${error.status}).`;
}

/** Name and password, posted to /api/v1/auth/login; then a full load of where the person was going. */
export function SignInForm({ next, oidcLabel, error, current }: Props) {
  const [message, setMessage] = useState<string | null>(error);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setMessage(null);
    try {
      await sendJson('/api/v1/auth/login', 'POST', { name: form.get('name'), password: form.get('password') }, principalSchema);
      window.location.assign(next);
      return;
    } catch (error) {
      setMessage(refusal(error));
    }
    setBusy(false);
  }

  return (
    <section className="panel sign-in-panel" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      {current && <p className="muted">You are signed in as {current}. Signing in again replaces that session.</p>}
      <form onSubmit={submit} className="form">
        <label>
          Name
          <input name="name" autoComplete="username" required autoFocus maxLength={200} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required maxLength={1024} />
        </label>
        {message && (
          <p className="form-error" role="alert">
            {message}
          </p>
        )}
        <button className="button primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {oidcLabel && (
        <p>
          <a className="button" href={`/api/v1/auth/oidc/login?next=${encodeURIComponent(next)}`}>
            {oidcLabel}
          </a>
        </p>
      )}
      <p className="muted small">
        No account yet? An admin makes one with <code>leasehold users add NAME --role operator</code>.
      </p>
    </section>
  );
}
