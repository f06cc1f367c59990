'use client';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import type { ApiTokenView } from '@/lib/db/api-tokens';
import { TOKEN_ROLES } from '@/lib/domain/roles';
import { NameRoleFields } from './name-role-fields';
import { newTokenSchema } from '@/lib/domain/schemas';
import { noContent, sendJson } from './send';

/** API tokens: make one (shown once), revoke one. */
export function TokensPanel({ tokens }: { tokens: ApiTokenView[] }) {
  const router = useRouter();
  const [message, setMessage] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const days = Number(form.get('days'));
    const result = await sendJson('POST', '/api/v1/tokens', { name: form.get('name'), role: form.get('role'), expiresInDays: days > 0 ? days : null }, newTokenSchema);
    if (!result.ok) return setMessage(result.message);
    setCreated({ name: result.data.name, token: result.data.token });
    setMessage(null);
    router.refresh();
  }
  async function revoke(token: ApiTokenView) {
    const result = await sendJson('DELETE', `/api/v1/tokens/${token.id}`, undefined, noContent);
    setMessage(result.ok ? `Token ${token.name} revoked.` : result.message);
    if (result.ok) router.refresh();
  }
  return (
    <section className="panel" aria-labelledby="tokens-title">
      <h2 id="tokens-title" className="panel-title">
        API tokens
      </h2>
      <p className="muted">For the CLI (LEASEHOLD_TOKEN), scripts and Prometheus (authorization.credentials_file). Sent as Authorization: Bearer.</p>
      <div className="table-scroll">
        <table className="data" aria-label="API tokens">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Starts with</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((token) => (
              <tr key={token.id}>
                <td className="mono">{token.name}</td>
                <td>{token.role}</td>
                <td className="mono">{token.prefix}…</td>
                <td>{token.lastUsedAt ?? 'never'}</td>
                <td>{token.expiresAt ?? 'never'}</td>
                <td>
                  {token.revokedAt ? (
                    'revoked'
                  ) : (
                    <button className="button subtle" type="button" onClick={() => revoke(token)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3 className="panel-subtitle">Make a token</h3>
      <form className="form" onSubmit={create}>
        <NameRoleFields roles={TOKEN_ROLES} />
        <label>
          Expires after (days; empty for never)
          <input name="days" type="number" min={1} max={3650} />
        </label>
        <button className="button primary" type="submit">
          Make token
        </button>
      </form>
      {created && (
        <div className="action-result" role="status">
          <p>
            Token <strong>{created.name}</strong>, shown this once: keep it now.
          </p>
          <pre className="mono">{created.token}</pre>
        </div>
      )}
      {message && <p role="status">{message}</p>}
    </section>
  );
}
