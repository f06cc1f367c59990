// A composition root (lib/root) of a test's own, on a store the test opened: its own bus,
// relay, caches and parts, as a fresh server's. Close it (root.close()) instead of the store.
import type { Config } from '../../lib/config';
import type { Store } from '../../lib/db/store';
import { createRoot, loadAppConfig, type Root } from '../../lib/root';

/** A root serving `store` (if given), with the config of a server with no config file and no environment, and what `config` sets. */
export function testRoot(store?: Store, config: Partial<Config> = {}): Root {
  return createRoot({ config: { ...loadAppConfig({ env: {}, cwd: '/nonexistent' }), ...config }, store });
}
