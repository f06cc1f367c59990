// Benchmark: how soon the overview shows an outage to the engineer who opens it. The server
// (`next start` through tests/e2e/serve.ts, on an embedded store) observes two Redis servers
// this bench starts and an etcd endpoint where nothing listens; leases are taken on both
// Redis servers and seen held, then both servers are stopped and every source reads as down.
// Then the overview is opened in Debian's Chromium, a new browser context each time, and two
// moments are taken from the navigation's start (the page's own performance.now(), looked at
// every frame):
//   - the peer: the first lease row on screen (the page's own first render of the list);
//   - the outage view: the banner naming every source as down and each lease last seen,
//     marked stale (what tests/e2e/outage.spec.ts checks, and reports).
// The ratio says what the outage costs beyond the page itself; the target is 2 s on a server
// that has been running (its pages served once before, as the spec does).
//
//   node --import tsx bench/outage-bench.ts [--loads 15] [--write]
//
// Needs a build (`npm run build`) and redis-server on the PATH (scripts/services.sh installs
// it). Every address is on 127.0.0.0/8. With --write, replaces its section of bench/RESULTS.md.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { ROOT } from '../tests/support/services';
import { startOutageServer, type OutageServer } from '../tests/support/outage-server';
import { gitHead, log, percentile, writeResultsSection } from './support';

const { values } = parseArgs({ options: { loads: { type: 'string', default: '15' }, write: { type: 'boolean', default: false } } });
const LOADS = Number(values.loads);
const TARGET_MS = 2_000;

let outage: OutageServer | undefined;
try {
  log('starting the server, taking the leases, stopping both Redis servers (tests/support/outage-server.ts)');
  outage = await startOutageServer({ port: 3194, redisPorts: [16495, 16496], deadEtcd: 'http://127.0.0.1:16497', stdout: 'ignore' });
  const { url: URL_BASE, leaseIds } = outage;

  const browser = await chromium.launch({ executablePath: process.env.LEASEHOLD_CHROMIUM || '/usr/bin/chromium' });
  const version = browser.version();
  const firstRow: number[] = [];
  const outageView: number[] = [];
  try {
    for (let load = 0; load <= LOADS; load++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${URL_BASE}/`, { waitUntil: 'commit' });
      const moments = (await (
        await page.waitForFunction(
          (ids) => {
            const w = window as unknown as { __firstRow?: number };
            if (w.__firstRow === undefined && document.querySelector('[data-testid="lease-row"]')) w.__firstRow = performance.now();
            const banner = document.querySelector('[data-testid="source-down-banner"]');
            const rows = ids.map((id) => document.querySelector(`[data-testid="lease-row"][data-lease-id="${CSS.escape(id)}"]`));
            const ready = banner?.textContent?.includes('None of the 3 sources can be read') && rows.every((row) => row?.getAttribute('data-stale') === 'true');
            return ready ? { firstRow: w.__firstRow ?? performance.now(), outage: performance.now() } : false;
          },
          leaseIds,
          { polling: 'raf', timeout: 30_000 },
        )
      ).jsonValue()) as { firstRow: number; outage: number };
      await context.close();
      // The first load warms the server's page modules for this browser: not counted.
      if (load === 0) continue;
      firstRow.push(moments.firstRow);
      outageView.push(moments.outage);
      log(`load ${load}: first row ${Math.round(moments.firstRow)} ms, outage view ${Math.round(moments.outage)} ms`);
    }
  } finally {
    await browser.close();
  }

  const ms = (x: number) => `${Math.round(x).toLocaleString('en')} ms`;
  const row = (name: string, xs: number[]) => `| ${name} | ${ms(percentile(xs, 50))} | ${ms(percentile(xs, 95))} | ${ms(Math.max(...xs))} |`;
  const ratios = outageView.map((x, i) => x / firstRow[i]!);
  const within = outageView.filter((x) => x <= TARGET_MS).length;
  const report = [
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${gitHead(ROOT)}, ${os.cpus().length} cores, ${LOADS} loads (one more, first, not counted), Chromium ${version} at 1280×800, a new context each load.`,
    '',
    '| from the navigation\'s start to | p50 | p95 | max |',
    '|---|---|---|---|',
    row('the first lease row on screen (the peer: the page itself)', firstRow),
    row('the outage view: banner naming the 3 sources down, both leases marked stale', outageView),
    '',
    `Outage view / first row, per load: p50 ${percentile(ratios, 50).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}. Within the ${ms(TARGET_MS)} target: ${within} of ${outageView.length} loads.`,
  ].join('\n');
  process.stdout.write(`${report}\n`);
  if (values.write) writeResultsSection({ id: 'outage-bench', title: 'The outage view: how soon the overview shows every source down', command: 'node --import tsx bench/outage-bench.ts --write', report });
} finally {
  await outage?.stop();
}
