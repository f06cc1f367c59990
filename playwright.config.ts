import { randomBytes } from 'node:crypto';
import { defineConfig } from '@playwright/test';
import { testServices } from './tests/support/services';
// Fixes the e2e run id in this process's environment, before the servers and workers start.
import './tests/e2e/observed';

// The servers (and the specs) seal alert endpoints' signing secrets with a key made for the
// run, unless one is given (lib/db/secret-box.ts); the servers inherit it.
process.env.LEASEHOLD_SECRET_KEY ||= randomBytes(32).toString('base64');

// Browser tests run in Debian's Chromium (installed by scripts/services.sh), never in a
// browser Playwright downloads: these machines cannot download it.
const chromium = process.env.LEASEHOLD_CHROMIUM ?? testServicesChromium() ?? '/usr/bin/chromium';

function testServicesChromium(): string | undefined {
  try {
    return testServices().chromium;
  } catch {
    return undefined;
  }
}

export const EMBEDDED_URL = 'http://127.0.0.1:3101';
export const POSTGRES_URL = 'http://127.0.0.1:3102';
export const OBSERVING_URL = 'http://127.0.0.1:3104';
export const DEMO_URL = 'http://127.0.0.1:3105';
export const OUTAGE_URL = 'http://127.0.0.1:3106';
export const OIDC_URL = 'http://127.0.0.1:3108';
export const LARGE_URL = 'http://127.0.0.1:3111';

export default defineConfig({
  testDir: 'tests/e2e',
  outputDir: 'test-results/e2e',
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: chromium,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
  projects: [
    { name: 'embedded', use: { baseURL: EMBEDDED_URL }, testIgnore: /(observe|console-live|demo|outage|phone|role-matrix|admin-actions|alerts|oidc|telemetry|canary|large|zookeeper)\.spec\.ts/ },
    // No anonymous access here: sign-in, roles, admin actions and alerts (tests/e2e/serve.ts).
    { name: 'postgres', use: { baseURL: POSTGRES_URL }, testMatch: /(health|role-matrix|admin-actions|alerts|telemetry)\.spec\.ts/ },
    { name: 'observing', use: { baseURL: OBSERVING_URL }, testMatch: /(observe|console-live|phone|canary|zookeeper)\.spec\.ts/ },
    // Every source unreachable: a server of its own, started by its spec (tests/e2e/outage.spec.ts).
    { name: 'outage', use: { baseURL: OUTAGE_URL }, testMatch: /outage\.spec\.ts/ },
    // The demo's server is started by its spec (tests/e2e/demo.spec.ts), from an empty data
    // directory, so that its clock starts at the test's and its fleet loads nothing else.
    { name: 'demo', use: { baseURL: DEMO_URL }, testMatch: /demo\.spec\.ts/ },
    // 5,000 leases, more than the overview keeps whole: a server of its own, started by its spec.
    { name: 'large', use: { baseURL: LARGE_URL }, testMatch: /large\.spec\.ts/ },
    // Single sign-on against a real OIDC provider: a server of its own, started by its spec.
    { name: 'oidc', use: { baseURL: OIDC_URL }, testMatch: /oidc\.spec\.ts/ },
  ],
  // Each server starts on a store of its own, fresh for this run: a new PGlite directory,
  // a new PostgreSQL database. `npm test` builds first; the servers run `npm start`'s script.
  webServer: [
    {
      command: 'node --import tsx tests/e2e/serve.ts embedded 3101',
      url: `${EMBEDDED_URL}/api/health/live`,
      timeout: 180_000,
      reuseExistingServer: false,
      gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
      stdout: 'pipe',
    },
    {
      command: 'node --import tsx tests/e2e/serve.ts observing 3104',
      url: `${OBSERVING_URL}/api/health/live`,
      timeout: 180_000,
      reuseExistingServer: false,
      gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
      stdout: 'pipe',
    },
    {
      command: 'node --import tsx tests/e2e/serve.ts postgres 3102',
      url: `${POSTGRES_URL}/api/health/live`,
      timeout: 180_000,
      reuseExistingServer: false,
      gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
      stdout: 'pipe',
    },
  ],
});
