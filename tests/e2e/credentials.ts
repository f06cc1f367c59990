// Users and API tokens of the e2e servers (tests/e2e/serve.ts seeds them into each server's
// store before it starts, and writes them where the specs read them). Passwords and tokens
// are random per run: there are no default credentials, not even in tests.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashPassword } from '../../lib/auth/password';
import { createToken } from '../../lib/auth/tokens';
import type { StoreConfig } from '../../lib/config';
import { revokeApiToken } from '../../lib/db/api-tokens';
import { openStore } from '../../lib/db/store';
import { createUser } from '../../lib/db/users';
import type { PersonRole, Role } from '../../lib/domain/roles';

export type Credentials = {
  users: Record<PersonRole, { name: string; password: string }>;
  tokens: Record<Role | 'expired' | 'revoked', string>;
};

const file = (port: number | string) => path.join(os.tmpdir(), `leasehold-e2e-credentials-${port}.json`);

export async function seedCredentials(store: StoreConfig, port: number | string): Promise<void> {
  const opened = await openStore(store);
  try {
    const users = {} as Credentials['users'];
    const tokens = {} as Credentials['tokens'];
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      const password = randomBytes(12).toString('base64url');
      await createUser(opened, { name: `e2e-${role}`, role, passwordHash: await hashPassword(password) });
      users[role] = { name: `e2e-${role}`, password };
      tokens[role] = (await createToken(opened, { name: `e2e-${role}`, role, expiresAt: null, userId: null, createdBy: 'e2e' })).token;
    }
    // A reporter: posts telemetry, and nothing else.
    tokens.reporter = (await createToken(opened, { name: 'e2e-reporter', role: 'reporter', expiresAt: null, userId: null, createdBy: 'e2e' })).token;
    tokens.expired = (await createToken(opened, { name: 'e2e-expired', role: 'admin', expiresAt: new Date(Date.now() - 1_000), userId: null, createdBy: 'e2e' })).token;
    tokens.revoked = (await createToken(opened, { name: 'e2e-revoked', role: 'admin', expiresAt: null, userId: null, createdBy: 'e2e' })).token;
    await revokeApiToken(opened, 'e2e-revoked', new Date());
    writeFileSync(file(port), JSON.stringify({ users, tokens } satisfies Credentials), { mode: 0o600 });
  } finally {
    await opened.close();
  }
}

/** The credentials of the e2e server on `port` (from its URL). */
export function credentials(baseUrl: string): Credentials {
  return JSON.parse(readFileSync(file(new URL(baseUrl).port), 'utf8')) as Credentials;
}
