// `leasehold users add NAME --role R`, `users list`, `users set-role NAME --role R`,
// `users disable NAME`: on the store itself (DATABASE_URL or the embedded store), so the first
// admin can be made before anyone can sign in. The password comes from a prompt or standard
// input, never from an argument.
import { hashPassword, passwordProblem } from '../../lib/auth/password';
import { isRole } from '../../lib/auth/permissions';
import { loadAppConfig } from '../../lib/root';
import { createUser, findUserByName, listUsers, updateUser, userView } from '../../lib/db/users';
import { openStore, type Store } from '../../lib/db/store';
import { terminalText } from '../../lib/domain/display';
import { readSecret } from './prompt';

export class CommandError extends Error {}

export async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadAppConfig().store);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

function roleOption(role: string | undefined, fallback?: 'viewer') {
  const value = role ?? fallback;
  if (!isRole(value)) throw new CommandError(`--role must be viewer, operator or admin${role === undefined ? '' : `, not "${terminalText(role)}"`}`);
  return value;
}

export async function usersCommand(sub: string | undefined, args: string[], options: { role?: string; json: boolean }): Promise<number> {
  const [name, ...extra] = args;
  // A password given as an argument is in the shell's history and in `ps` already: refused, not ignored.
  if (extra.length > 0) throw new CommandError(`users ${sub ?? ''} takes one user name; the password comes from a prompt or standard input, never an argument`);
  const out = (data: unknown, human: string) => process.stdout.write(options.json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
  if (sub === 'list') {
    const users = await withStore(listUsers);
    out({ users: users.map(userView) }, users.length === 0 ? 'no users yet (leasehold users add NAME --role admin)' : users.map((u) => `${u.name}\t${u.role}${u.disabledAt ? '\tdisabled' : ''}${u.oidcSubject ? '\toidc' : ''}`).join('\n'));
    return 0;
  }
  if (!name) throw new CommandError(`users ${sub ?? ''} needs a user name`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/.test(name)) throw new CommandError('a user name has 1-100 letters, digits, ".", "_", "@" or "-", starting with a letter or digit');
  if (sub === 'add') {
    const role = roleOption(options.role);
    const password = await readSecret(`password for ${name}: `);
    const problem = passwordProblem(password);
    if (problem) throw new CommandError(problem);
    const user = await withStore(async (store) => createUser(store, { name, role, passwordHash: await hashPassword(password) }));
    out({ user: userView(user) }, `user ${user.name} added with the role ${user.role}`);
    return 0;
  }
  if (sub === 'set-role' || sub === 'disable' || sub === 'enable' || sub === 'set-password') {
    const passwordHash = sub === 'set-password' ? await newPasswordHash(name) : undefined;
    const user = await withStore(async (store) => {
      const found = await findUserByName(store, name);
      if (!found) throw new CommandError(`no user named "${name}"`);
      const role = sub === 'set-role' ? roleOption(options.role) : undefined;
      return updateUser(store, found.id, { role, passwordHash, disabled: sub === 'disable' ? true : sub === 'enable' ? false : undefined });
    });
    out({ user: userView(user) }, `user ${user.name}: ${sub === 'set-role' ? `role ${user.role}` : sub === 'set-password' ? 'new password set, sessions ended' : sub === 'disable' ? 'disabled, sessions ended' : 'enabled'}`);
    return 0;
  }
  throw new CommandError(`unknown users subcommand "${terminalText(sub ?? '')}" (expected add, list, set-role, set-password, disable or enable)`);
}

async function newPasswordHash(name: string): Promise<string> {
  const password = await readSecret(`new password for ${name}: `);
  const problem = passwordProblem(password);
  if (problem) throw new CommandError(problem);
  return hashPassword(password);
}
