// The embedded demo's admin: `demo-admin`, given a new random password at every start and
// printed once, so that the demo's admin actions can be tried at once without any default
// credential existing anywhere. (Anonymous visitors from this machine may read the demo
// without signing in: lib/auth/principal.ts anonymousRole.)
import { hashPassword } from './password';
import { randomSecret } from './secrets';
import { createUser, findUserByName, updateUser } from '../db/users';
import type { Store } from '../db/store';

export const DEMO_ADMIN = 'demo-admin';

export async function resetDemoAdmin(store: Store): Promise<string> {
  const password = randomSecret(15); // 120 bits, 20 characters
  const passwordHash = await hashPassword(password);
  const existing = await findUserByName(store, DEMO_ADMIN);
  if (existing) await updateUser(store, existing.id, { role: 'admin', passwordHash, disabled: false });
  else await createUser(store, { name: DEMO_ADMIN, role: 'admin', passwordHash });
  return password;
}

/**
 * Outside the demo (sources configured, or LEASEHOLD_DEMO=off), the demo's admin is disabled:
 * its password was printed, and it must not outlive the demo as an admin nobody chose.
 */
export async function retireDemoAdmin(store: Store): Promise<boolean> {
  const existing = await findUserByName(store, DEMO_ADMIN);
  if (!existing || existing.disabledAt !== null) return false;
  await updateUser(store, existing.id, { disabled: true });
  return true;
}
