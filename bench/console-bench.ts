// Benchmark: the console with 10,000 leases in a PostgreSQL store (or --leases N).
//   - GET /api/v1/leases (the whole list, or its first page of 10,000 past that) against
//     `next start`, p50 / p99 over sequential requests, the same for a filtered list, and the
//     paged reads of the overview past 2,000 leases: its first read, a page after a cursor, a search;
//   - the peer, measured in the same run: a bare node:http server answering the same list
//     with the obvious implementation (SELECT the rows with pg, JSON.stringify them);
//   - the overview in Debian's Chromium: from navigation to the first lease row on screen,
//     and to the list answering a search (interactive).
//
//   node --import tsx bench/console-bench.ts [--leases 10000] [--requests 300] [--write]
//
// Needs a build (`npm run build`) and the test services (`bash scripts/services.sh up`).
// With --write, replaces the console section of bench/RESULTS.md (one per lease count).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import pg from 'pg';
import { openStore } from '../lib/db/store';
import { createPostgresDatabase } from '../tests/support/databases';
import { ROOT, testServices } from '../tests/support/services';
import { OVERVIEW_FIRST_READ, OVERVIEW_WHOLE_LIMIT } from '../lib/domain/overview';

const { values } = parseArgs({
  options: {
    leases: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '300' },
    write: { type: 'boolean', default: false },
  },
});
const LEASES = Number(values.leases);
const REQUESTS = Number(values.requests);
const PORT = 3190;
const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};

// ------------------------------------------------------------------ the store
const db = await createPostgresDatabase('lh_consolebench');
const store = await openStore({ kind: 'postgres', url: db.url });
await store.close();
const sql = new pg.Client(db.url);
await sql.connect();
await sql.query(`INSERT INTO "Source" (name, backend, status, "lastGoodReadAt", "updatedAt") VALUES ('redis-main', 'redis', 'up', now(), now()), ('etcd-main', 'etcd', 'up', now(), now()), ('pg-main', 'postgres', 'up', now(), now())`);
await sql.query(
  `INSERT INTO "Lease" (id, "sourceName", backend, kind, key, state, holder, token, fenced, "ttlMs", "acquiredAt", "renewedAt", "expiresAt", "observedAt",
                        transitions, "lastMarginMs", "lastIntervalMs", candidates, "updatedAt")
   SELECT src || '/lock:job-' || i, src, backend, 'lock', 'lock:job-' || i, CASE WHEN i % 50 = 0 THEN 'expired' ELSE 'held' END,
          CASE WHEN i % 50 = 0 THEN NULL ELSE 'worker-' || (i % 97) END, i, true, 30000, now() - interval '1 hour', now() - interval '5 seconds',
          now() + interval '25 seconds', now(), 3, 25000, 10000, '[]'::jsonb, now()
     FROM generate_series(1, $1::int) AS i,
          LATERAL (SELECT (ARRAY['redis-main', 'etcd-main', 'pg-main'])[1 + i % 3] AS src, (ARRAY['redis', 'etcd', 'postgres'])[1 + i % 3] AS backend) AS s`,
  [LEASES],
);
await sql.query(
  `INSERT INTO "LeaseEvent" ("leaseId", seq, type, at, holder, token)
   SELECT id, 1, 'acquired', now() - interval '10 minutes', holder, token FROM "Lease" WHERE state = 'held'`,
);
log(`store: ${LEASES} leases`);

// ------------------------------------------------------------------ the peer: the obvious implementation
const escapeHtml = (text: unknown) => String(text ?? '—').replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const peer = http.createServer(async (request, response) => {
  if (request.url === '/table') {
    // The scrolling peer: the same leases as one plain HTML table, every row in the page.
    const { rows } = await sql.query(`SELECT "sourceName", key, state, holder, token, "expiresAt", transitions FROM "Lease" ORDER BY "sourceName", key`);
    const body = rows
      .map((r) => `<tr><td>${escapeHtml(r.key)}</td><td>${escapeHtml(r.state)}</td><td>${escapeHtml(r.holder)}</td><td>${escapeHtml(r.token)}</td><td>${escapeHtml(r.expiresAt?.toISOString())}</td><td>${escapeHtml(r.sourceName)}</td><td>${escapeHtml(r.transitions)}</td></tr>`)
      .join('');
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(`<!doctype html><html><body style="margin:0;font:14px sans-serif"><div id="box" style="height:600px;overflow-y:auto"><table style="width:100%;border-collapse:collapse">${body}</table></div></body></html>`);
    return;
  }
  const { rows } = await sql.query(`SELECT l.*, s."lastGoodReadAt" AS "sourceReadAt" FROM "Lease" l JOIN "Source" s ON s.name = l."sourceName" ORDER BY l."sourceName", l.key`);
  const now = Date.now();
  const leases = rows.map((row) => ({
    id: row.id,
    source: row.sourceName,
    backend: row.backend,
    kind: row.kind,
    key: row.key,
    state: row.state,
    holder: row.holder,
    token: row.token,
    fenced: row.fenced,
    ttlMs: row.ttlMs,
    remainingMs: row.state === 'held' && row.expiresAt ? Math.max(0, row.expiresAt.getTime() - now) : null,
    acquiredAt: row.acquiredAt,
    renewedAt: row.renewedAt,
    expiresAt: row.expiresAt,
    observedAt: row.observedAt,
    stale: row.stale,
    candidates: row.candidates,
    transitions: row.transitions,
  }));
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ leases }));
});
await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
const peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}/`;

// ------------------------------------------------------------------ Leasehold
const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
  cwd: ROOT,
  env: { ...process.env, LEASEHOLD_ANONYMOUS_ROLE: 'viewer', DATABASE_URL: db.url, PORT: String(PORT), HOST: '127.0.0.1', LEASEHOLD_COLLECTOR: 'off', LEASEHOLD_CONFIG: undefined },
  stdio: ['ignore', 'ignore', 'inherit'],
});
// A crash of the benchmark must not leave the server running (it would skew the next run).
process.on('exit', () => server.kill('SIGTERM'));
const base = `http://127.0.0.1:${PORT}`;
for (let waited = 0; ; waited += 200) {
  if (waited > 120_000) throw new Error('the server did not start within 2 minutes');
  try {
    if ((await fetch(`${base}/api/health/live`)).ok) break;
  } catch {
    // not yet
  }
  await sleep(200);
}

// The client: node:http on a keep-alive connection, the body's bytes collected as they come
// (what curl does); the time is from sending the request to the last byte of the answer.
// Decoding and parsing the JSON is the reader's work, not the server's, and is left out for
// both servers alike (fetch() + text() adds 5-10 ms of client work for 5 MB here).
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function get(url: string): Promise<{ body: Buffer; serverTiming: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ body: Buffer.concat(chunks), serverTiming: String(response.headers['server-timing'] ?? '') }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

async function measure(url: string, expectLeases: number | null) {
  // Warm up (the first request loads the list), then measure one request at a time.
  for (let i = 0; i < 10; i++) await get(url);
  const times: number[] = [];
  const serverTimes: number[] = [];
  let bytes = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    const response = await get(url);
    times.push(performance.now() - started);
    const server = /app;dur=([\d.]+)/.exec(response.serverTiming);
    if (server) serverTimes.push(Number(server[1]));
    bytes = response.body.length;
    if (i === 0 && expectLeases !== null) {
      const count = (JSON.parse(response.body.toString('utf8')) as { leases: unknown[] }).leases.length;
      if (count !== expectLeases) throw new Error(`${url} returned ${count} leases, expected ${expectLeases}`);
    }
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), bytes, server: serverTimes.length ? { p50: percentile(serverTimes, 50), p99: percentile(serverTimes, 99) } : null };
}

const FIRST_PAGE = Math.min(LEASES, 10_000);
/** A key the search finds: job-4242, or the last one of a smaller store. */
const SEARCH_KEY = `job-${Math.min(4242, LEASES)}`;
const ours = await measure(`${base}/api/v1/leases`, FIRST_PAGE);
log(`leasehold: p50 ${ours.p50.toFixed(1)} ms, p99 ${ours.p99.toFixed(1)} ms (assembling it: p50 ${ours.server?.p50} ms, p99 ${ours.server?.p99} ms)`);
const filtered = await measure(`${base}/api/v1/leases?source=redis-main&state=held`, null);
log(`leasehold filtered: p50 ${filtered.p50.toFixed(1)} ms, p99 ${filtered.p99.toFixed(1)} ms`);
// What the overview reads past OVERVIEW_WHOLE_LIMIT leases: its first read, a page in the
// middle of the list (after a cursor), and a search over all of them.
const firstRead = await measure(base + OVERVIEW_FIRST_READ, Math.min(LEASES, OVERVIEW_WHOLE_LIMIT));
const middle = (JSON.parse((await get(`${base}/api/v1/leases?limit=${Math.floor(LEASES / 2)}`)).body.toString('utf8')) as { next: string | null }).next;
const paged = await measure(`${base}/api/v1/leases?limit=500&cursor=${middle}`, Math.min(500, LEASES - Math.floor(LEASES / 2)));
const search = await measure(`${base}/api/v1/leases?sort=problems&limit=500&q=${SEARCH_KEY}`, null);
log(`paged: first read p50 ${firstRead.p50.toFixed(1)} ms, a page after a cursor ${paged.p50.toFixed(1)} ms, a search ${search.p50.toFixed(1)} / ${search.p99.toFixed(1)} ms`);
const theirs = await measure(peerUrl, LEASES);
log(`peer: p50 ${theirs.p50.toFixed(1)} ms, p99 ${theirs.p99.toFixed(1)} ms`);

// ------------------------------------------------------------------ the overview in Chromium
const browser = await chromium.launch({
  executablePath: testServices().chromium ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const firstRow: number[] = [];
const interactive: number[] = [];
/** From typing the search to its result on screen. */
const searchShown: number[] = [];
for (let run = 0; run < 5; run++) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const started = performance.now();
  await page.goto(`${base}/`, { waitUntil: 'commit' });
  await page.locator('[data-testid="lease-row"]').first().waitFor({ state: 'visible', timeout: 30_000 });
  firstRow.push(performance.now() - started);
  // Interactive: a search typed now filters the leases (in the browser up to 2,000, on the server past that) and shows the result.
  const search = page.getByLabel('Search leases and holders');
  await search.waitFor({ state: 'visible', timeout: 30_000 });
  const typed = performance.now();
  await search.fill(SEARCH_KEY);
  await page.locator(`[data-lease-id$="/lock:${SEARCH_KEY}"]`).waitFor({ state: 'visible', timeout: 30_000 });
  interactive.push(performance.now() - started);
  searchShown.push(performance.now() - typed);
  await page.close();
}
// Smooth: scroll the list 200 px a frame for 240 frames (about 4 s at 60 frames a second,
// 1,100 rows passed), and time the frames; the peer is the same leases as a plain table.
async function scrollFrames(url: string, box: string, ready: string) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(url);
  await page.locator(ready).first().waitFor({ state: 'visible', timeout: 30_000 });
  await page.waitForTimeout(500);
  // A string, not a function: tsx would wrap a function's inner names in a helper the page lacks.
  const deltas = (await page.evaluate(`new Promise((resolve) => {
    const element = document.querySelector(${JSON.stringify(box)});
    const times = [];
    let last = 0;
    const step = (t) => {
      if (last) times.push(t - last);
      last = t;
      element.scrollTop += 200;
      if (times.length < 240) requestAnimationFrame(step);
      else resolve(times);
    };
    requestAnimationFrame(step);
  })`)) as number[];
  const elements = (await page.evaluate('document.getElementsByTagName("*").length')) as number;
  await page.close();
  return { p50: percentile(deltas, 50), p95: percentile(deltas, 95), long: deltas.filter((d) => d > 50).length, elements };
}
const scrollOurs = await scrollFrames(`${base}/`, '.vtable-body', '[data-testid="lease-row"]');
const scrollPeer = await scrollFrames(`${peerUrl}table`, '#box', 'tr');
log(`scrolling: ours p50 ${scrollOurs.p50.toFixed(1)} / p95 ${scrollOurs.p95.toFixed(1)} ms per frame (${scrollOurs.long} over 50 ms, ${scrollOurs.elements} elements); plain table p50 ${scrollPeer.p50.toFixed(1)} / p95 ${scrollPeer.p95.toFixed(1)} ms (${scrollPeer.long}, ${scrollPeer.elements} elements)`);
await browser.close();
const median = (xs: number[]) => percentile(xs, 50);
log(`overview: first row ${median(firstRow).toFixed(0)} ms, interactive ${median(interactive).toFixed(0)} ms, search shown ${median(searchShown).toFixed(0)} ms after typing (median of 5: ${firstRow.map((x) => x.toFixed(0)).join(', ')} / ${interactive.map((x) => x.toFixed(0)).join(', ')})`);

server.kill('SIGTERM');
await new Promise((resolve) => server.on('exit', resolve));
peer.close();
await sql.end();
await db.drop();

const f = (x: number) => (x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en'));
const output = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; ${LEASES.toLocaleString('en')} leases in a PostgreSQL store on loopback; ` +
    `\`next start\`, no collector; ${REQUESTS} sequential requests each after 10 warm-up requests, timed from sending the request to the last byte of the answer (node:http client on one keep-alive connection; decoding and parsing left to the reader, for both servers).`,
  '',
  '| | p50 | p99 | body |',
  '|---|---:|---:|---:|',
  `| \`GET /api/v1/leases\` (${FIRST_PAGE === LEASES ? 'all' : 'the first page:'} ${FIRST_PAGE.toLocaleString('en')}) | ${f(ours.p50)} ms | ${f(ours.p99)} ms | ${(ours.bytes / 1e6).toFixed(1)} MB |`,
  `| \`GET /api/v1/leases?source=redis-main&state=held\` | ${f(filtered.p50)} ms | ${f(filtered.p99)} ms | ${(filtered.bytes / 1e6).toFixed(1)} MB |`,
  `| the overview's first read, \`${OVERVIEW_FIRST_READ.replace('/api/v1/leases', '')}\` | ${f(firstRead.p50)} ms | ${f(firstRead.p99)} ms | ${(firstRead.bytes / 1e6).toFixed(1)} MB |`,
  `| a page of 500 in the middle, \`?limit=500&cursor=…\` | ${f(paged.p50)} ms | ${f(paged.p99)} ms | ${(paged.bytes / 1e6).toFixed(2)} MB |`,
  `| a search over all, \`?sort=problems&limit=500&q=${SEARCH_KEY}\` | ${f(search.p50)} ms | ${f(search.p99)} ms | ${(search.bytes / 1e6).toFixed(2)} MB |`,
  `| peer: node:http + pg, SELECT and JSON.stringify | ${f(theirs.p50)} ms | ${f(theirs.p99)} ms | ${(theirs.bytes / 1e6).toFixed(1)} MB |`,
  `| ratio, ours / peer | ${(ours.p50 / theirs.p50).toFixed(2)} | ${(ours.p99 / theirs.p99).toFixed(2)} | |`,
  '',
  ours.server ? `Of that, the route's own work (its \`Server-Timing\`): p50 ${f(ours.server.p50)} ms, p99 ${f(ours.server.p99)} ms; the rest is Next sending ${(ours.bytes / 1e6).toFixed(1)} MB and the client reading it.` : '',
  '',
  `Overview in Chromium (median of 5 fresh pages, 1440×900): first lease row visible ${f(median(firstRow))} ms after navigation; ` +
    `a search typed then and its result shown ${f(median(interactive))} ms after navigation, ${f(median(searchShown))} ms after it was typed` +
    (LEASES > OVERVIEW_WHOLE_LIMIT ? ` (past ${OVERVIEW_WHOLE_LIMIT.toLocaleString('en')} leases the server searches, 150 ms after the last key).` : ' (the browser searches its whole list).'),
  '',
  `Scrolling the overview's list 200 px a frame for 240 frames: frame time p50 ${f(scrollOurs.p50)} ms, p95 ${f(scrollOurs.p95)} ms, ${scrollOurs.long} frames over 50 ms, ${scrollOurs.elements.toLocaleString('en')} elements in the page; ` +
    `the peer, the same ${LEASES.toLocaleString('en')} leases as one plain HTML table: p50 ${f(scrollPeer.p50)} ms, p95 ${f(scrollPeer.p95)} ms, ${scrollPeer.long} frames over 50 ms, ${scrollPeer.elements.toLocaleString('en')} elements.`,
].join('\n');
console.log(output);
if (values.write) {
  const file = path.join(ROOT, 'bench', 'RESULTS.md');
  const text = readFileSync(file, 'utf8');
  // One section per lease count: 10,000 (issue 5's) keeps its old marker.
  const marker = LEASES === 10_000 ? 'console-bench' : `console-bench-${LEASES}`;
  const section = `<!-- ${marker}:start -->\n${output}\n<!-- ${marker}:end -->`;
  const existing = new RegExp(`<!-- ${marker}:start -->[\\s\\S]*<!-- ${marker}:end -->`);
  writeFileSync(
    file,
    existing.test(text)
      ? text.replace(existing, section)
      : `${text.trimEnd()}\n\n## The console at ${LEASES.toLocaleString('en')} leases\n\n\`node --import tsx bench/console-bench.ts --leases ${LEASES} --write\`\n\n${section}\n`,
  );
  log('wrote bench/RESULTS.md');
}
process.exit(0);
