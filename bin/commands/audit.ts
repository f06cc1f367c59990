// `leasehold audit verify`: walks the audit log's hash chain in the store (DATABASE_URL, or the
// embedded store) and says whether every entry is as it was written. Exit 0 when intact, 1 when
// an entry was changed, removed or reordered (or the store cannot be read), 2 for a wrong subcommand.
import { loadAppConfig } from '../../lib/root';
import { AUDIT_CHAIN_MIGRATION, verifyAuditChain } from '../../lib/db/audit';
import { openStore } from '../../lib/db/store';
import { terminalText } from '../../lib/domain/display';

export async function auditCommand(sub: string | undefined, json: boolean): Promise<number> {
  if (sub !== 'verify') {
    console.error(`leasehold: unknown audit subcommand "${terminalText(sub ?? '')}" (expected verify)`);
    return 2;
  }
  const config = loadAppConfig();
  // Verifying changes nothing: the store is not migrated here, only asked whether it is.
  const store = await openStore(config.store, { migrate: false });
  try {
    const status = await store.migrationStatus();
    if (status.pending.includes(AUDIT_CHAIN_MIGRATION) || status.failed.includes(AUDIT_CHAIN_MIGRATION)) {
      console.error(`leasehold: the store has no audit chain yet (migration ${AUDIT_CHAIN_MIGRATION} is not applied); run \`leasehold migrate\` first`);
      return 1;
    }
    const report = await verifyAuditChain(store, { batch: 1_000 });
    const entries = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`;
    if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else if (report.ok) console.log(`audit chain intact: ${entries(report.checked)}${report.head ? `\nlast entry: ${report.head.id}, hash ${report.head.hash}` : ''}`);
    else console.log(`audit chain broken at entry ${report.firstBroken!.id}: ${report.firstBroken!.reason}\n(${entries(report.checked)} before it intact)`);
    return report.ok ? 0 : 1;
  } finally {
    await store.close();
  }
}
