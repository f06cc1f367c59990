// Alert endpoints' signing secrets and routing keys are encrypted at rest (lib/db/secret-box.ts):
// whoever reads the store cannot sign alerts. On a real PostgreSQL store: what the table holds,
// what the sender gets, a rotation from one key to another, and the refusals of a process that
// lacks the key (it does not start; an endpoint cannot be added without one).
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addWebhook } from '../../lib/alerts/manage';
import { DEMO_INBOX } from '../../lib/alerts/demo-inbox';
import { prepareSecretsAtRest, SecretsAtRestError } from '../../lib/alerts/secrets-at-rest';
import { claimDelivery, listDeliveries } from '../../lib/db/deliveries';
import { queueMessages } from '../../lib/db/alerts';
import { keyIdOf, keyringOf, SecretKeyError, SecretUnreadableError } from '../../lib/db/secret-box';
import { openStore, type Store } from '../../lib/db/store';
import { createWebhook, getWebhookForSending, updateWebhook } from '../../lib/db/webhooks';
import { NO_FACTS } from '../../lib/domain/alert-rules';
import { TEST_ALERTS } from '../support/collector';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { cli, STACK_LINE } from '../support/run';

const newKey = () => randomBytes(32).toString('base64');
const idOf = (key: string) => keyIdOf(Buffer.from(key, 'base64'));
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const ROUTING_KEY = 'R0UTING-KEY-0123456789abcdef0123';

let db: TestDatabase & { url: string };
let store: Store;
const saved = { current: process.env.LEASEHOLD_SECRET_KEY, previous: process.env.LEASEHOLD_SECRET_KEY_PREVIOUS };
const useKeys = (current: string | undefined, previous?: string) => {
  if (current === undefined) delete process.env.LEASEHOLD_SECRET_KEY;
  else process.env.LEASEHOLD_SECRET_KEY = current;
  if (previous === undefined) delete process.env.LEASEHOLD_SECRET_KEY_PREVIOUS;
  else process.env.LEASEHOLD_SECRET_KEY_PREVIOUS = previous;
};

beforeAll(async () => {
  db = await createPostgresDatabase('lh_secrets');
  store = await openStore({ kind: 'postgres', url: db.url });
});
afterEach(async () => {
  useKeys(saved.current, saved.previous);
  await store.prisma.webhook.deleteMany({});
});
afterAll(async () => {
  await store.close();
  await db.drop();
});

const query = <T,>(text: string, params: unknown[] = []) => store.withSql((sql) => sql.query<T>(text, params));
const raw = async () => query<{ id: string; name: string; secrets: string[]; routingKey: string | null }>(`SELECT id, name, secrets, "routingKey" FROM "Webhook" ORDER BY name`);
const endpoint = (name: string, extra: Partial<Parameters<typeof createWebhook>[1]> = {}) =>
  createWebhook(store, { name, url: 'http://127.0.0.1:9/hook', format: 'pagerduty', secret: SECRET, routingKey: ROUTING_KEY, rules: [], ...extra });

describe('webhook secrets at rest', () => {
  it('the store holds neither the secret nor the routing key; the sender gets both', async () => {
    const key = newKey();
    useKeys(key);
    const hook = await endpoint('at-rest');
    const [row] = await raw();
    expect(JSON.stringify(row)).not.toContain(SECRET);
    expect(JSON.stringify(row)).not.toContain(ROUTING_KEY);
    expect(row!.secrets[0]).toMatch(new RegExp(`^lhenc:v1:${idOf(key)}:[A-Za-z0-9_-]+$`));
    expect(row!.routingKey).toMatch(new RegExp(`^lhenc:v1:${idOf(key)}:`));
    expect(await getWebhookForSending(store, hook.id)).toMatchObject({ secrets: [SECRET], routingKey: ROUTING_KEY });
    // Rotating the secret seals the new one and keeps the old one as it was stored.
    const next = `whsec_${randomBytes(24).toString('base64')}`;
    await updateWebhook(store, hook.id, { rotateSecret: next });
    expect(JSON.stringify(await raw())).not.toContain(next);
    expect((await getWebhookForSending(store, hook.id))?.secrets).toEqual([next, SECRET]);
  });

  it('a sealed secret copied to another endpoint does not open there, and its delivery fails saying why', async () => {
    useKeys(newKey());
    const a = await endpoint('copied-from');
    const b = await endpoint('copied-to');
    const [rowA] = (await raw()).filter((r) => r.id === a.id);
    await query(`UPDATE "Webhook" SET secrets = $2 WHERE id = $1`, [b.id, rowA!.secrets]);
    await expect(getWebhookForSending(store, b.id)).rejects.toBeInstanceOf(SecretUnreadableError);
    const now = new Date();
    await store.transaction((sql) =>
      queueMessages(sql, [{ id: b.id, rules: [] }], { id: '', fingerprint: '0'.repeat(32), rule: { id: 'test', name: 'Test', type: 'missed_renewal' }, severity: 'info', status: 'firing', source: 'x', leaseId: null, leaseKey: null, ...NO_FACTS, summary: 't', startsAt: now.toISOString(), endsAt: null, occurrences: 1 }, 'alert.test', { linkOf: () => null }, now),
    );
    const [queued] = await listDeliveries(store, { webhookId: b.id });
    const claimed = await claimDelivery(store, queued!.id, 'w', 10_000);
    expect(claimed?.webhook).toMatchObject({ secrets: [], unreadable: expect.stringContaining('copied from another endpoint') });
  });

  it('rotation: the new key current and the old one previous, a start seals everything again with the new; then the old key is not needed', async () => {
    const [oldKey, newer] = [newKey(), newKey()];
    useKeys(oldKey);
    const hooks = [await endpoint('rot-1'), await endpoint('rot-2')];
    useKeys(newer, oldKey);
    expect(await prepareSecretsAtRest(store)).toEqual({ resealed: 2 });
    for (const row of await raw()) {
      expect(row.secrets[0]!.startsWith(`lhenc:v1:${idOf(newer)}:`)).toBe(true);
      expect(row.routingKey!.startsWith(`lhenc:v1:${idOf(newer)}:`)).toBe(true);
    }
    expect(await prepareSecretsAtRest(store)).toEqual({ resealed: 0 });
    useKeys(newer);
    for (const hook of hooks) expect(await getWebhookForSending(store, hook.id)).toMatchObject({ secrets: [SECRET], routingKey: ROUTING_KEY });
  });

  it('secrets kept in the clear (written before this version) are sealed at the first start with a key', async () => {
    useKeys(newKey());
    const hook = await endpoint('legacy');
    await query(`UPDATE "Webhook" SET secrets = ARRAY[$2], "routingKey" = $3 WHERE id = $1`, [hook.id, SECRET, ROUTING_KEY]);
    expect(await prepareSecretsAtRest(store)).toEqual({ resealed: 1 });
    expect(JSON.stringify(await raw())).not.toContain(SECRET);
    expect(await getWebhookForSending(store, hook.id)).toMatchObject({ secrets: [SECRET], routingKey: ROUTING_KEY });
  });

  it('a process without the key does not start: it names the key the endpoints need', async () => {
    const key = newKey();
    useKeys(key);
    await endpoint('needs-the-key');
    useKeys(undefined);
    const refusal = await prepareSecretsAtRest(store).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SecretsAtRestError);
    expect((refusal as Error).message).toContain(`encrypted with the key ${idOf(key)}`);
    expect((refusal as Error).message).toContain('"needs-the-key"');
    // Another key is no better.
    useKeys(newKey());
    expect(await prepareSecretsAtRest(store).catch((error: unknown) => error)).toBeInstanceOf(SecretsAtRestError);
    // `leasehold collect` says so and stops, with no stack trace.
    useKeys(undefined);
    const config = `${process.env.TMPDIR ?? '/tmp'}/leasehold-secrets-${randomBytes(3).toString('hex')}.json`;
    await import('node:fs').then((fs) => fs.writeFileSync(config, JSON.stringify({ sources: [{ name: 'r', backend: 'redis', urls: ['redis://127.0.0.1:1'] }] })));
    const result = await cli(['collect'], { LEASEHOLD_CONFIG: config, DATABASE_URL: db.url, LEASEHOLD_SECRET_KEY: undefined, LEASEHOLD_SECRET_KEY_PREVIOUS: undefined });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`encrypted with the key ${idOf(key)}`);
    expect(result.stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it('without a key, secrets in the clear stop a start too; the demo inbox alone does not', async () => {
    useKeys(undefined);
    await createWebhook(store, { name: DEMO_INBOX, url: 'http://127.0.0.1:3000/api/v1/demo/inbox', format: 'native', secret: SECRET, routingKey: null, rules: [], keepPlainWithoutKey: true });
    expect((await raw())[0]!.secrets).toEqual([SECRET]);
    expect(await prepareSecretsAtRest(store)).toEqual({ resealed: 0 });
    // An endpoint written in the clear by an older version.
    await query(`INSERT INTO "Webhook" (id, name, url, format, secrets, rules, "updatedAt") VALUES ('legacy-id', 'legacy', 'http://127.0.0.1:9/x', 'native', ARRAY[$1], ARRAY[]::text[], now())`, [SECRET]);
    const refusal = await prepareSecretsAtRest(store).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SecretsAtRestError);
    expect((refusal as Error).message).toContain('in the clear');
    expect((refusal as Error).message).toContain('"legacy"');
    expect((refusal as Error).message).not.toContain(DEMO_INBOX);
  });

  it('without a key an endpoint cannot be added: 503 secret_key_missing, nothing stored', async () => {
    useKeys(undefined);
    const refusal = await addWebhook(store, TEST_ALERTS, { name: 'no-key', url: 'http://127.0.0.1:9/hook', format: 'native', rules: [] }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 503, code: 'secret_key_missing' });
    expect((refusal as Error).message).toContain('LEASEHOLD_SECRET_KEY');
    expect(await raw()).toEqual([]);
  });

  it.each([
    ['too short', { LEASEHOLD_SECRET_KEY: randomBytes(16).toString('base64') }, 'LEASEHOLD_SECRET_KEY: expected 32 random bytes'],
    ['not base64 or hex', { LEASEHOLD_SECRET_KEY: 'correct horse battery staple' }, 'LEASEHOLD_SECRET_KEY: expected'],
    ['a bad previous key', { LEASEHOLD_SECRET_KEY: newKey(), LEASEHOLD_SECRET_KEY_PREVIOUS: `${newKey()},xyz` }, 'LEASEHOLD_SECRET_KEY_PREVIOUS (key 2)'],
  ])('a malformed key (%s) is named, its value never shown', (_name, env, named) => {
    const error = (() => {
      try {
        keyringOf(env);
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SecretKeyError);
    expect((error as Error).message).toContain(named);
    for (const value of Object.values(env)) expect((error as Error).message).not.toContain(value);
  });

  it('a key written as 64 hex digits is the same key as its base64', () => {
    const bytes = randomBytes(32);
    expect(keyringOf({ LEASEHOLD_SECRET_KEY: bytes.toString('hex') }).current?.id).toBe(keyringOf({ LEASEHOLD_SECRET_KEY: bytes.toString('base64') }).current?.id);
  });
});
