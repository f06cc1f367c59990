// Run by every process that may send alerts or manage endpoints (the server, `leasehold
// collect`) when it starts: the endpoints' signing secrets are sealed at rest with
// LEASEHOLD_SECRET_KEY (lib/db/secret-box.ts), and a process that cannot read them, or would
// leave them in the clear, does not start: it says which key is missing instead of failing
// every delivery later. What it can, it seals with the current key (secrets written before
// they were sealed, or sealed with a previous key while rotating).
//
// The demo's own endpoint (demo-inbox) is exempt: it signs only for this server's own inbox,
// and the demo runs with no setting at all (without a key its secret is kept as it is, and
// one it cannot read is replaced when the demo starts).
import type { Store } from '../db';
import { processKeyring, PREVIOUS_KEYS_ENV, SECRET_KEY_ENV, SecretKeyError, type Keyring } from '../db/secret-box';
import { resealWebhookSecrets } from '../db/webhooks';
import { DEMO_INBOX } from './demo-inbox';

/** The store holds endpoint secrets this process cannot keep as they must be kept: it must not start. */
export class SecretsAtRestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsAtRestError';
  }
}

const names = (endpoints: { name: string }[]) => `${endpoints.slice(0, 5).map((e) => `"${e.name.slice(0, 60)}"`).join(', ')}${endpoints.length > 5 ? `, and ${endpoints.length - 5} more` : ''}`;

/**
 * Checks the endpoints' secrets against this process's keys and seals what it can; returns,
 * and says through `log`, how many endpoints it sealed again. Throws SecretsAtRestError when
 * an endpoint (other than the demo's) is sealed with a key this process does not have, or is
 * kept in the clear and no key is set, or when a key in the environment is malformed: the
 * caller stops with its message.
 */
export async function prepareSecretsAtRest(store: Store, log: (line: string) => void = () => {}): Promise<{ resealed: number }> {
  let keyring: Keyring;
  try {
    keyring = processKeyring();
  } catch (error) {
    throw error instanceof SecretKeyError ? new SecretsAtRestError(error.message) : error;
  }
  const report = await resealWebhookSecrets(store, keyring);
  const unreadable = report.unreadable.filter((e) => e.name !== DEMO_INBOX);
  if (unreadable.length > 0) {
    const keys = [...new Set(unreadable.map((e) => e.keyId))].join(', ');
    throw new SecretsAtRestError(
      `${unreadable.length} alert endpoint${unreadable.length === 1 ? ' has its' : 's have their'} signing secrets encrypted with the key ${keys}, which this process does not have (${names(unreadable)}). ` +
        `Set ${SECRET_KEY_ENV} to the key they were stored with (or, while rotating, the new key there and the old one in ${PREVIOUS_KEYS_ENV}); see docs/security.md.`,
    );
  }
  const plain = report.plain.filter((e) => e.name !== DEMO_INBOX);
  if (plain.length > 0) {
    throw new SecretsAtRestError(
      `${plain.length} alert endpoint${plain.length === 1 ? ' keeps its' : 's keep their'} signing secrets in the clear in the store (${names(plain)}), and ${SECRET_KEY_ENV} is not set. ` +
        `Set it to 32 random bytes (\`openssl rand -base64 32\`) for every Leasehold process: they are encrypted with it when the server starts (docs/security.md).`,
    );
  }
  if (report.resealed > 0) log(`encrypted the signing secrets of ${report.resealed} alert endpoint${report.resealed === 1 ? '' : 's'} with the current ${SECRET_KEY_ENV}`);
  return { resealed: report.resealed };
}
