// `leasehold collect`: the collector as its own process. Several may run against one
// PostgreSQL store: each source is observed by exactly one of them at a time.
import type { Config } from '../../lib/config';
import { prepareSecretsAtRest, SecretsAtRestError } from '../../lib/alerts/secrets-at-rest';
import { openStore } from '../../lib/db/store';
import { createRoot } from '../../lib/root';
import { startCollector } from '../../lib/collector';

export async function collectCommand(config: Config): Promise<number> {
  if (config.sources.length === 0) {
    console.error(`leasehold: no sources are configured in ${config.file ?? 'leasehold.config.json (absent)'}; nothing to collect`);
    return 1;
  }
  const store = await openStore(config.store, { log: (line) => console.log(`[leasehold] store: ${line}`) });
  // It delivers alerts: it needs the key the endpoints' signing secrets are sealed with.
  try {
    await prepareSecretsAtRest(store, (line) => console.log(`[leasehold] ${line}`));
  } catch (error) {
    await store.close();
    if (error instanceof SecretsAtRestError) {
      console.error(`leasehold: ${error.message}`);
      return 1;
    }
    throw error;
  }
  // This command's composition root (lib/root): the collector with its alert worker, on this store.
  const root = createRoot({ config, store });
  root.runCollector((wiring) => startCollector({ ...wiring, store }));
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  console.log('[leasehold] stopping the collector');
  await root.close(); // the collector, then the store
  return 0;
}
