// The ApiToken table: `lh_<id>_<secret>` tokens, stored as the sha256 of the secret.
import type { Role } from '../domain/roles';
import type { Store } from './store';
import type { ApiTokenView } from '../domain/schemas/accounts';

export type ApiTokenRecord = Awaited<ReturnType<Store['prisma']['apiToken']['findMany']>>[number];

/** What the API shows of a token, never its hash: lib/domain/schemas/accounts.ts. */
export type { ApiTokenView };

export function apiTokenView(token: ApiTokenRecord & { user?: { name: string } | null }): ApiTokenView {
  return {
    id: token.id,
    name: token.name,
    role: token.role,
    prefix: token.prefix,
    user: token.user?.name ?? null,
    createdBy: token.createdBy,
    createdAt: token.createdAt.toISOString(),
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    expiresAt: token.expiresAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
  };
}

export class TokenNameTakenError extends Error {
  constructor(readonly tokenName: string) {
    super(`A token named "${tokenName}" already exists (a revoked token keeps its name): choose another name.`);
    this.name = 'TokenNameTakenError';
  }
}

export async function insertApiToken(
  store: Store,
  token: { id: string; name: string; role: Role; tokenHash: string; prefix: string; userId: string | null; createdBy: string | null; expiresAt: Date | null },
): Promise<ApiTokenRecord> {
  try {
    return await store.prisma.apiToken.create({ data: token });
  } catch (error) {
    if ((error as { code?: string }).code === 'P2002') throw new TokenNameTakenError(token.name);
    throw error;
  }
}

export const findApiToken = (store: Store, id: string) => store.prisma.apiToken.findUnique({ where: { id }, include: { user: true } });

export const listApiTokens = (store: Store) => store.prisma.apiToken.findMany({ orderBy: { createdAt: 'desc' }, include: { user: { select: { name: true } } } });

/** Marks a token revoked (kept, so the audit log's references stay readable). Returns how many were revoked: 0 when none matched or it already was. */
export async function revokeApiToken(store: Store, idOrName: string, at: Date): Promise<number> {
  const { count } = await store.prisma.apiToken.updateMany({ where: { OR: [{ id: idOrName }, { name: idOrName }], revokedAt: null }, data: { revokedAt: at } });
  return count;
}

export const touchApiToken = (store: Store, id: string, at: Date) => store.prisma.apiToken.updateMany({ where: { id }, data: { lastUsedAt: at } });
