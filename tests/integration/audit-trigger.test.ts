// AuditEntry is append-only: the database itself refuses UPDATE, DELETE and TRUNCATE,
// whoever asks (raw SQL or Prisma), on both store kinds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../lib/db/store';
import { STORE_KINDS, type TestDatabase } from '../support/databases';

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

  const entry = (requestId: string) => ({
    requestId,
    phase: 'requested',
    action: 'force-expire',
    actor: 'alice',
    actorRole: 'operator',
    leaseId: 'pg/leases/weekly-digest',
    reason: 'holder wedged in GC',
    expectedHolder: 'worker-7',
    expectedToken: '340282366920938463463374607431768211457', // above 2^128: tokens are exact end to end
  });

  it('accepts inserts and keeps tokens exact, however large', async () => {
    const created = await store.prisma.auditEntry.create({ data: entry('r1') });
    const read = await store.prisma.auditEntry.findUniqueOrThrow({ where: { id: created.id } });
    expect(read.expectedToken?.toFixed()).toBe('340282366920938463463374607431768211457');
  });

  it.each([
    { name: 'UPDATE', sql: `UPDATE "AuditEntry" SET reason = 'rewritten'` },
    { name: 'DELETE', sql: 'DELETE FROM "AuditEntry"' },
    { name: 'TRUNCATE', sql: 'TRUNCATE "AuditEntry"' },
  ])('refuses $name in SQL', async ({ name, sql }) => {
    await store.prisma.auditEntry.create({ data: entry(`sql-${name}`) });
    const before = await store.prisma.auditEntry.count();
    await expect(store.withSql((s) => s.exec(sql))).rejects.toThrow(new RegExp(`AuditEntry is append-only: ${name} is not allowed`));
    expect(await store.prisma.auditEntry.count()).toBe(before);
  });

  it('refuses updates and deletes through Prisma', async () => {
    const created = await store.prisma.auditEntry.create({ data: entry('prisma') });
    await expect(store.prisma.auditEntry.update({ where: { id: created.id }, data: { reason: 'x' } })).rejects.toThrow(/append-only/);
    await expect(store.prisma.auditEntry.delete({ where: { id: created.id } })).rejects.toThrow(/append-only/);
    await expect(store.prisma.auditEntry.deleteMany({})).rejects.toThrow(/append-only/);
    expect((await store.prisma.auditEntry.findUniqueOrThrow({ where: { id: created.id } })).reason).toBe('holder wedged in GC');
  });
});
