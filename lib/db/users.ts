// The User table: local users (scrypt password) and users who sign in by OIDC.
import { randomUUID } from 'node:crypto';
import type { PersonRole as Role } from '../domain/roles';
import type { Store } from './store';
import type { UserView } from '../domain/schemas/accounts';
import { systemClock } from '../time/clock';

export type UserRecord = Awaited<ReturnType<Store['prisma']['user']['findMany']>>[number];

/** What the API and the settings page show of a user: never the password hash. */
/** What the API shows of a user: lib/domain/schemas/accounts.ts. */
export type { UserView };

export function userView(user: UserRecord): UserView {
  return {
    id: user.id,
    name: user.name,
    role: user.role,
    signsInWith: user.oidcSubject ? 'oidc' : 'password',
    createdAt: user.createdAt.toISOString(),
    disabledAt: user.disabledAt?.toISOString() ?? null,
  };
}

export class UserExistsError extends Error {
  constructor(readonly userName: string) {
    super(`A user named "${userName}" already exists.`);
    this.name = 'UserExistsError';
  }
}

export async function createUser(store: Store, user: { name: string; role: Role; passwordHash: string | null }): Promise<UserRecord> {
  try {
    return await store.prisma.user.create({ data: { id: randomUUID(), ...user } });
  } catch (error) {
    if ((error as { code?: string }).code === 'P2002') throw new UserExistsError(user.name);
    throw error;
  }
}

export const findUserByName = (store: Store, name: string) => store.prisma.user.findUnique({ where: { name } });
export const findUserById = (store: Store, id: string) => store.prisma.user.findUnique({ where: { id } });
export const listUsers = (store: Store) => store.prisma.user.findMany({ orderBy: { name: 'asc' } });
export const countAdmins = (store: Store) => store.prisma.user.count({ where: { role: 'admin', disabledAt: null } });

/** Changes a user's role, password or disabled state; disabling or a new password ends their sessions. */
export async function updateUser(store: Store, id: string, change: { role?: Role; passwordHash?: string; disabled?: boolean }): Promise<UserRecord> {
  const disabledAt = change.disabled === undefined ? undefined : change.disabled ? new Date(systemClock.wall()) : null;
  return store.prisma.$transaction(async (tx) => {
    const user = await tx.user.update({ where: { id }, data: { role: change.role, passwordHash: change.passwordHash, disabledAt } });
    if (change.disabled || change.passwordHash !== undefined) await tx.session.deleteMany({ where: { userId: id } });
    return user;
  });
}

/**
 * A change that demotes or disables a user, unless it would leave no enabled admin: null then,
 * nothing changed. One transaction that first locks every enabled admin's row, so two admins
 * demoting each other at once go one after the other and the second counts after the first (a
 * count made before either would let both through). Disabling or a new password ends the
 * user's sessions, as updateUser does.
 */
export async function updateUserUnlessLastAdmin(store: Store, id: string, change: { role?: Role; passwordHash?: string; disabled?: boolean }): Promise<UserRecord | null> {
  return store.prisma.$transaction(async (tx) => {
    const admins = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "User" WHERE role = 'admin' AND "disabledAt" IS NULL ORDER BY id FOR UPDATE`;
    if (admins.length <= 1 && admins.some((admin) => admin.id === id)) return null;
    const disabledAt = change.disabled === undefined ? undefined : change.disabled ? new Date(systemClock.wall()) : null;
    const changed = await tx.user.update({ where: { id }, data: { role: change.role, passwordHash: change.passwordHash, disabledAt } });
    if (change.disabled || change.passwordHash !== undefined) await tx.session.deleteMany({ where: { userId: id } });
    return changed;
  });
}

/**
 * The user an OIDC identity signs in as: found by issuer and subject, made on first sign-in,
 * its role set from the provider's groups at every sign-in. A local user's name is never
 * taken over: an OIDC user whose name is taken gets "<name>@<issuer host>".
 */
export async function upsertOidcUser(store: Store, identity: { issuer: string; subject: string; name: string; role: Role }): Promise<UserRecord> {
  const where = { oidcIssuer_oidcSubject: { oidcIssuer: identity.issuer, oidcSubject: identity.subject } };
  const existing = await store.prisma.user.findUnique({ where });
  if (existing) return store.prisma.user.update({ where: { id: existing.id }, data: { role: identity.role } });
  const taken = await store.prisma.user.findUnique({ where: { name: identity.name } });
  const name = taken ? `${identity.name}@${new URL(identity.issuer).host}` : identity.name;
  return store.prisma.user.create({
    data: { id: randomUUID(), name, role: identity.role, passwordHash: null, oidcIssuer: identity.issuer, oidcSubject: identity.subject },
  });
}
