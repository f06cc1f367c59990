import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = path.dirname(fileURLToPath(import.meta.url));
// Alert endpoints' signing secrets are sealed with LEASEHOLD_SECRET_KEY (lib/db/secret-box.ts):
// the tests run with one of their own, made for the run, unless one is given.
const env = { LEASEHOLD_SECRET_KEY: process.env.LEASEHOLD_SECRET_KEY || randomBytes(32).toString('base64') };
const shared = {
  // server-only throws outside React's server build; in tests, server code is just code.
  resolve: { alias: { '@': root, 'server-only': path.join(root, 'node_modules', 'server-only', 'empty.js') } },
};

// Three suites, run one after another by scripts/test.sh:
//   unit        pure code, no servers
//   contract    one suite every implementation of a contract passes, on real servers
//   integration store, CLI, scripts, on real servers
//   chaos       faults injected into servers of the suite's own while a collector, alerts
//               and an operator run (docs/reliability.md)
export default defineConfig({
  ...shared,
  test: {
    projects: [
      {
        ...shared,
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts', 'lib/**/*.test.ts'],
          environment: 'node',
          env,
        },
      },
      {
        ...shared,
        test: {
          name: 'contract',
          include: ['tests/contract/**/*.test.ts'],
          environment: 'node',
          env,
          // Two files at a time, as integration: they wait on servers and TTLs (one at a time:
          // 108 s of which 17 s of CPU); their keys, tables and prefixes are their own.
          maxWorkers: 2,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        ...shared,
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          env,
          // Two files at a time: most of their time is spent waiting on servers, TTLs and polls,
          // and on 2 cores one at a time took about 12 minutes (705 s), two at a time 345 s. Their fixed ports differ.
          maxWorkers: 2,
          testTimeout: 90_000,
          hookTimeout: 90_000,
        },
      },
      {
        ...shared,
        test: {
          name: 'chaos',
          include: ['tests/chaos/**/*.test.ts'],
          environment: 'node',
          env,
          // Two files at a time: each injects faults into servers of its own (ports of its own).
          maxWorkers: 2,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
