// Users and API tokens as admins manage them (the settings page, /api/v1/users and /tokens).
// The last enabled admin cannot be demoted or disabled: nobody could manage users after.
import { z } from 'zod';
import { RequestError } from '../errors';
import { apiTokenView, listApiTokens, revokeApiToken, type ApiTokenView } from '../db/api-tokens';
import { countAdmins, createUser, findUserById, listUsers, updateUser, updateUserUnlessLastAdmin, userView, type UserView } from '../db/users';
import type { Store } from '../db/store';
import { ROLES } from '../config/auth-schema';
import { TOKEN_ROLES } from '../domain/roles';
import { hashPassword, passwordProblem } from './password';
import type { Principal } from './principal';
import { createToken } from './tokens';
import { systemClock } from '../time/clock';

export class ManageError extends RequestError {
  constructor(
    readonly status: 400 | 404 | 409 | 422 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ManageError';
  }
}

const userName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/, { error: 'expected 1-100 letters, digits, ".", "_", "@" or "-", starting with a letter or digit' });
const password = z.string().min(1).max(1024);

export const newUserBody = z.strictObject({ name: userName, role: z.enum(ROLES), password });
export const userChangeBody = z.strictObject({ role: z.enum(ROLES).optional(), disabled: z.boolean().optional(), password: password.optional() });
export const newTokenBody = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@:-]{0,99}$/, { error: 'expected 1-100 letters, digits, ".", "_", "@", ":" or "-"' }),
  role: z.enum(TOKEN_ROLES, { error: 'expected "viewer", "operator", "admin" or "reporter"' }),
  /** Days until it expires; null or absent: never. */
  expiresInDays: z.number().int().min(1).max(3650).nullable().optional(),
});

async function checkedHash(text: string): Promise<string> {
  const problem = passwordProblem(text);
  if (problem) throw new ManageError(400, 'weak_password', `The password cannot be used: ${problem}.`);
  return hashPassword(text);
}

export async function addUser(store: Store, body: z.output<typeof newUserBody>): Promise<UserView> {
  const user = await createUser(store, { name: body.name, role: body.role, passwordHash: await checkedHash(body.password) }).catch((error: unknown) => {
    if ((error as Error).name === 'UserExistsError') throw new ManageError(409, 'user_exists', (error as Error).message);
    throw error;
  });
  return userView(user);
}

export async function changeUser(store: Store, id: string, change: z.output<typeof userChangeBody>): Promise<UserView> {
  const user = await findUserById(store, id);
  if (!user) throw new ManageError(404, 'not_found', 'No such user.');
  const demotes = (change.role !== undefined && change.role !== 'admin') || change.disabled === true;
  const lastAdmin = () => new ManageError(422, 'last_admin', `${user.name} is the last enabled admin: make another admin first.`);
  if (demotes && user.role === 'admin' && user.disabledAt === null && (await countAdmins(store)) <= 1) throw lastAdmin();
  const passwordHash = change.password === undefined ? undefined : await checkedHash(change.password);
  if (!demotes) return userView(await updateUser(store, id, { role: change.role, disabled: change.disabled, passwordHash }));
  // Demoting or disabling: counted and changed in one transaction (lib/db/users.ts).
  const changed = await updateUserUnlessLastAdmin(store, id, { role: change.role, passwordHash, disabled: change.disabled });
  if (changed === null) throw lastAdmin();
  return userView(changed);
}

export async function usersAndTokens(store: Store): Promise<{ users: UserView[]; tokens: ApiTokenView[] }> {
  const [users, tokens] = await Promise.all([listUsers(store), listApiTokens(store)]);
  return { users: users.map(userView), tokens: tokens.map(apiTokenView) };
}

export async function addToken(store: Store, body: z.output<typeof newTokenBody>, by: Principal): Promise<{ token: string } & ApiTokenView> {
  const expiresAt = body.expiresInDays ? new Date(systemClock.wall() + body.expiresInDays * 86_400_000) : null;
  const { token, record } = await createToken(store, { name: body.name, role: body.role, expiresAt, userId: null, createdBy: by.name }).catch((error: unknown) => {
    if ((error as Error).name === 'TokenNameTakenError') throw new ManageError(409, 'token_exists', (error as Error).message);
    throw error;
  });
  return { token, ...apiTokenView(record) };
}

export async function removeToken(store: Store, id: string): Promise<void> {
  if ((await revokeApiToken(store, id, new Date(systemClock.wall()))) === 0) throw new ManageError(404, 'not_found', 'No such token, or it is revoked already.');
}
