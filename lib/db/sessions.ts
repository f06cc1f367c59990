// The Session table. The id is the sha256 of the cookie's secret (lib/auth/session.ts).
import type { Store } from './store';

export type SessionWithUser = NonNullable<Awaited<ReturnType<typeof findSession>>>;

export const insertSession = (store: Store, session: { id: string; userId: string; authMethod: string; address: string | null; expiresAt: Date }) =>
  store.prisma.session.create({ data: session });

export const findSession = (store: Store, id: string) => store.prisma.session.findUnique({ where: { id }, include: { user: true } });

export const touchSession = (store: Store, id: string, at: Date) => store.prisma.session.updateMany({ where: { id }, data: { lastSeenAt: at } });

export const deleteSession = (store: Store, id: string) => store.prisma.session.deleteMany({ where: { id } });

/** Sign-out everywhere: every session of the user. */
export const deleteUserSessions = (store: Store, userId: string) => store.prisma.session.deleteMany({ where: { userId } });

/** Sessions past their absolute end or idle since `idleBefore`. */
export const deleteEndedSessions = (store: Store, now: Date, idleBefore: Date) =>
  store.prisma.session.deleteMany({ where: { OR: [{ expiresAt: { lte: now } }, { lastSeenAt: { lt: idleBefore } }] } });
