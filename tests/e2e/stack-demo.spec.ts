// The full-stack demo as the README runs it (`npm run demo -- --backends postgres,redis,etcd,zookeeper`):
// starts (or reuses) the services, the console and 18 server processes; pauses are SIGSTOP,
// crashes SIGKILL. Within 60 s every backend's leases must have changed hands, and Ctrl-C
// (SIGINT) must leave no server process behind.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { ROOT } from '../support/services';
import { screenshot, watchConsole } from './support';

const PORT = 3106;
const URL_ = `http://127.0.0.1:${PORT}`;
const SOURCES = ['pixly-postgres', 'pixly-redis', 'pixly-etcd', 'pixly-zookeeper'];
type Failover = { leaseId: string; holder: string | null; previousHolder: string | null; token: string | null; previousToken: string | null; cause: string };

let demo: ChildProcess;
let output = '';
let fleetStartedAt = 0;

const demoServers = () => {
  try {
    return execFileSync('pgrep', ['-f', 'scripts/demo-server.ts'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
};

/** The demo console's processes (scripts/start.ts and its `next start`, in their own process group): found by the port in their environment. */
const consoleProcesses = () =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        return env.includes(`PORT=${PORT}`) && env.includes('LEASEHOLD_DEMO=off');
      } catch {
        return false; // gone, or not ours to read
      }
    });

test.beforeAll(async () => {
  test.setTimeout(300_000);
  mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const log = createWriteStream(path.join(ROOT, 'test-results', 'stack-demo.log'));
  // What `npm run demo -- ...` runs (package.json), without npm in between: npm ends at once on
  // SIGINT, while the demo is still stopping its fleet, and the test wants the demo's own exit.
  // Its own process group, so that a failed run can take everything down with it; --seconds
  // as a backstop should even that fail.
  demo = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--backends', 'postgres,redis,etcd,zookeeper', '--port', String(PORT), '--seconds', '600'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  for (const stream of [demo.stdout!, demo.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      log.write(chunk);
    });
  }
  for (let waited = 0; !/servers run on/.test(output); waited += 250) {
    if (demo.exitCode !== null) throw new Error(`npm run demo exited (${demo.exitCode}):\n${output.slice(-3000)}`);
    if (waited > 280_000) throw new Error(`the demo's fleet did not start within 280 s:\n${output.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  fleetStartedAt = Date.now();
});

test.afterAll(async () => {
  if (demo && demo.exitCode === null) {
    const exited = new Promise((resolve) => demo.once('exit', resolve));
    process.kill(-demo.pid!, 'SIGCONT');
    process.kill(-demo.pid!, 'SIGKILL');
    await exited;
  }
  for (const pid of consoleProcesses()) process.kill(Number(pid), 'SIGKILL');
});

test('the full-stack demo: PostgreSQL, Redis, etcd and ZooKeeper at once, leases change hands on every backend within 60 s, Ctrl-C stops every process', async ({ page, request }) => {
  test.setTimeout(240_000);
  const errors = watchConsole(page);
  expect(demoServers().length).toBeGreaterThanOrEqual(18);

  await page.goto(URL_);
  await expect(page.getByTestId('source-line')).toContainText('4 sources up', { timeout: 15_000 });

  // Within 60 s of the fleet's start: on each backend a lease went from one server to another
  // (real SIGSTOP pauses past the lease, SIGKILL crashes), and where there is a token, the new
  // one is higher. Read as soon as each backend has one, not at the end of the 60 s.
  const changesOf = (failovers: Failover[], source: string) => failovers.filter((f) => f.leaseId.startsWith(`${source}/`) && f.previousHolder && f.holder && f.previousHolder !== f.holder);
  let body: { failovers: Failover[] } = { failovers: [] };
  await expect
    .poll(
      async () => {
        body = (await (await request.get(`${URL_}/api/v1/failovers?since=1h&limit=1000`)).json()) as { failovers: Failover[] };
        return SOURCES.filter((source) => changesOf(body.failovers, source).length === 0);
      },
      { message: 'backends with no lease changing hands yet', timeout: Math.max(1_000, fleetStartedAt + 60_000 - Date.now()), intervals: [1_000] },
    )
    .toEqual([]);
  await expect.poll(() => /paused with SIGSTOP/.test(output) && /killed with SIGKILL/.test(output), { timeout: Math.max(1_000, fleetStartedAt + 60_000 - Date.now()) }).toBe(true);
  for (const source of SOURCES) {
    const changes = changesOf(body.failovers, source);
    expect(changes.length, `leases of ${source} changing hands`).toBeGreaterThanOrEqual(1);
    for (const change of changes.filter((f) => f.token !== null && f.previousToken !== null)) {
      expect(BigInt(change.token!), `${change.leaseId}: token after ${change.previousHolder} → ${change.holder}`).toBeGreaterThan(BigInt(change.previousToken!));
    }
  }
  expect(output).toMatch(/paused with SIGSTOP/);
  expect(output).toMatch(/killed with SIGKILL/);

  await page.reload();
  await expect(page.getByTestId('lease-row').first()).toBeVisible();
  await screenshot(page, 'stack-demo-overview');
  await page.goto(`${URL_}/failovers`);
  for (const source of SOURCES) await expect(page.locator(`[data-testid="failover-row"][data-lease-id^="${source}/"]`).first()).toBeVisible({ timeout: 10_000 });
  await screenshot(page, 'stack-demo-failovers');
  await page.goto(`${URL_}/sources`);
  for (const source of SOURCES) await expect(page.getByRole('heading', { name: source })).toBeVisible({ timeout: 10_000 });
  await screenshot(page, 'stack-demo-sources');
  expect(errors).toEqual([]);

  // Ctrl-C: the fleet (paused servers too) and the console stop, and the demo exits 0.
  const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
  demo.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(output).toMatch(/demo: stopped/);
  expect(demoServers()).toEqual([]);
  expect(consoleProcesses(), 'the console and its next start').toEqual([]);
  // The console is gone too: nothing answers on its port.
  expect(await fetch(`${URL_}/api/health/live`).then(() => 'answered', () => 'closed')).toBe('closed');
});
