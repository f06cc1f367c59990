'use client';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import type { UserView } from '@/lib/db/users';
import { ROLES } from '@/lib/domain/roles';
import { NameRoleFields } from './name-role-fields';
import { userViewSchema } from '@/lib/domain/schemas';
import { sendJson } from './send';


/** Users: add one, change a role, disable or enable. Every change goes through the API (admin only there too). */
export function UsersPanel({ users, me }: { users: UserView[]; me: string }) {
  const router = useRouter();
  const [message, setMessage] = useState<string | null>(null);
  const act = async (method: string, url: string, body: unknown, done: string) => {
    const result = await sendJson(method, url, body, userViewSchema);
    setMessage(result.ok ? done : result.message);
    if (result.ok) router.refresh();
  };
  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const name = String(form.get('name'));
    await act('POST', '/api/v1/users', { name, role: form.get('role'), password: form.get('password') }, `User ${name} added.`);
  }
  return (
    <section className="panel" aria-labelledby="users-title">
      <h2 id="users-title" className="panel-title">
        Users
      </h2>
      <div className="table-scroll">
        <table className="data" aria-label="Users">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Signs in with</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {users.map((user) => (
              <tr key={user.id}>
                <td className="mono">{user.name}</td>
                <td>
                  <select
                    aria-label={`Role of ${user.name}`}
                    value={user.role}
                    onChange={(event) => act('PATCH', `/api/v1/users/${user.id}`, { role: event.target.value }, `${user.name} is now ${event.target.value}.`)}
                  >
                    {ROLES.map((role) => (
                      <option key={role}>{role}</option>
                    ))}
                  </select>
                </td>
                <td>{user.signsInWith}</td>
                <td>
                  {user.disabledAt ? 'disabled ' : 'enabled '}
                  {user.name !== me && (
                    <button className="button subtle" type="button" onClick={() => act('PATCH', `/api/v1/users/${user.id}`, { disabled: !user.disabledAt }, `${user.name} ${user.disabledAt ? 'enabled' : 'disabled'}.`)}>
                      {user.disabledAt ? 'Enable' : 'Disable'}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3 className="panel-subtitle">Add a user</h3>
      <form className="form" onSubmit={add}>
        <NameRoleFields />
        <label>
          Password (at least 12 characters)
          <input name="password" type="password" required minLength={12} maxLength={1024} autoComplete="new-password" />
        </label>
        <button className="button primary" type="submit">
          Add user
        </button>
      </form>
      {message && <p role="status">{message}</p>}
    </section>
  );
}
