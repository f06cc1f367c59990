// AuditEntry is append-only: the database itself refuses UPDATE, DELETE and TRUNCATE,
// whoever asks (raw SQL or Prisma), on both store kinds. And it is a chain: the database
// refuses an entry whose prevHash is not the hash of the last entry, and two entries with
// one prevHash, however they are written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit, type AuditInput } from '../../lib/db/audit';
import { openStore, type Store } from '../../lib/db/store';
import { STORE_KINDS, type TestDatabase } from '../support/databases';

const HASH = (c: string) => c.repeat(64);

describe.each(STORE_KINDS)('AuditEntry on $kind', ({ create }) => {
  let db: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    db = await create();
    store = await openStore(db.storeConfig());
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  const entry = (requestId: string): AuditInput => ({
    requestId,
    phase: 'requested',
    action: 'force-expire',
    actor: 'alice',
    actorRole: 'operator',
    authMethod: 'password',
    clientAddress: '203.0.113.7',
    leaseId: 'pg/leases/weekly-digest',
    reason: 'holder wedged in GC',
    expectedHolder: 'worker-7',
    expectedToken: '340282366920938463463374607431768211457', // above 2^128: tokens are exact end to end
  });

  it('accepts appended entries and keeps tokens exact, however large', async () => {
    const created = await appendAudit(store, entry('r1'));
    const read = await store.prisma.auditEntry.findUniqueOrThrow({ where: { id: created.id } });
    expect(read.expectedToken?.toFixed()).toBe('340282366920938463463374607431768211457');
    expect(read.authMethod).toBe('password');
    expect(read.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    { name: 'UPDATE', sql: `UPDATE "AuditEntry" SET reason = 'rewritten'` },
    { name: 'DELETE', sql: 'DELETE FROM "AuditEntry"' },
    { name: 'TRUNCATE', sql: 'TRUNCATE "AuditEntry"' },
  ])('refuses $name in SQL', async ({ name, sql }) => {
    await appendAudit(store, entry(`sql-${name}`));
    const before = await store.prisma.auditEntry.count();
    await expect(store.withSql((s) => s.exec(sql))).rejects.toThrow(new RegExp(`AuditEntry is append-only: ${name} is not allowed`));
    expect(await store.prisma.auditEntry.count()).toBe(before);
  });

  it('refuses updates and deletes through Prisma', async () => {
    const created = await appendAudit(store, entry('prisma'));
    await expect(store.prisma.auditEntry.update({ where: { id: created.id }, data: { reason: 'x' } })).rejects.toThrow(/append-only/);
    await expect(store.prisma.auditEntry.delete({ where: { id: created.id } })).rejects.toThrow(/append-only/);
    await expect(store.prisma.auditEntry.deleteMany({})).rejects.toThrow(/append-only/);
    expect((await store.prisma.auditEntry.findUniqueOrThrow({ where: { id: created.id } })).reason).toBe('holder wedged in GC');
  });

  it('refuses an insert that does not chain onto the last entry, whoever writes it', async () => {
    const data = { requestId: 'forged', phase: 'done', action: 'force-expire', actor: 'mallory', actorRole: 'admin', authMethod: 'token' };
    // Prisma without a prevHash: the chain already has entries.
    await expect(store.prisma.auditEntry.create({ data: { ...data, hash: HASH('a') } })).rejects.toThrow(/AuditEntry chain: prevHash must be [0-9a-f]{64} \(the hash of entry \d+\), not null/);
    // SQL with a made-up prevHash.
    await expect(
      store.withSql((s) =>
        s.query(`INSERT INTO "AuditEntry" ("requestId", phase, action, actor, "actorRole", "authMethod", "prevHash", hash) VALUES ('forged', 'done', 'x', 'mallory', 'admin', 'token', $1, $2)`, [
          HASH('b'),
          HASH('c'),
        ]),
      ),
    ).rejects.toThrow(/AuditEntry chain: prevHash must be/);
    // The right prevHash but an id below the last one.
    const last = await store.prisma.auditEntry.findFirstOrThrow({ orderBy: { id: 'desc' } });
    await expect(store.prisma.auditEntry.create({ data: { ...data, id: 1n, prevHash: last.hash, hash: HASH('d') } })).rejects.toThrow(/does not follow the last entry's id/);
  });

  it('checks the values of the columns the application writes', async () => {
    const last = await store.prisma.auditEntry.findFirstOrThrow({ orderBy: { id: 'desc' } });
    const data = { requestId: 'checks', action: 'force-expire', actor: 'mallory', actorRole: 'admin', prevHash: last.hash };
    await expect(store.prisma.auditEntry.create({ data: { ...data, phase: 'succeeded', authMethod: 'token', hash: HASH('e') } })).rejects.toThrow(/AuditEntry_phase_check/);
    await expect(store.prisma.auditEntry.create({ data: { ...data, phase: 'done', authMethod: 'kerberos', hash: HASH('e') } })).rejects.toThrow(/AuditEntry_authMethod_check/);
    await expect(store.prisma.auditEntry.create({ data: { ...data, phase: 'refused', authMethod: 'token', hash: HASH('e') } })).rejects.toThrow(/AuditEntry_refused_status_check/);
    await expect(store.prisma.auditEntry.create({ data: { ...data, phase: 'done', authMethod: 'token', hash: 'not-a-hash' } })).rejects.toThrow(/AuditEntry_hash_check/);
  });

  it('refuses a second entry with the same prevHash (the chain never forks)', async () => {
    const last = await store.prisma.auditEntry.findFirstOrThrow({ orderBy: { id: 'desc' } });
    const [before] = await store.withSql((s) => s.query<{ hash: string; prevHash: string }>('SELECT hash, "prevHash" FROM "AuditEntry" WHERE id < $1 ORDER BY id DESC LIMIT 1', [last.id.toString()]));
    // With the chain trigger out of the way (as the table owner), the unique index still refuses the fork.
    await expect(
      store.withSql((s) =>
        s.transaction(async (tx) => {
          await tx.exec('ALTER TABLE "AuditEntry" DISABLE TRIGGER "AuditEntry_chain"');
          await tx.query(`INSERT INTO "AuditEntry" ("requestId", phase, action, actor, "actorRole", "authMethod", "prevHash", hash) VALUES ('fork', 'done', 'x', 'mallory', 'admin', 'token', $1, $2)`, [
            before!.hash,
            HASH('f'),
          ]);
        }),
      ),
    ).rejects.toThrow(/AuditEntry_prevHash_key|unique/);
  });
});
