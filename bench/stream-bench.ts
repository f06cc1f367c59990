// Benchmark: the live stream (GET /api/v1/stream) with clients that do not read (issue 13, point 5).
//   - a server of its own: `npm start`'s, on a fresh embedded store (--store pglite, the default;
//     or postgres: a fresh database of the test PostgreSQL, where the code before the fix fails
//     to write batches of this load: its NOTIFY payload is too long), observing a Redis prefix on
//     which the bench renews --keys locks --rate times a second in all: about that many `lease`
//     messages a second on the stream (measured: the bus's position moves);
//   - stalled: --clients raw sockets that send their request and never read (paused), for
//     --seconds; the server process's RSS sampled every second, its growth counted from the
//     median of the 10 s before they connect (after a warm-up under the same load);
//   - the peer, in the same run: the same server and load with --clients that read everything;
//   - --before DIR: the stalled run again on another built checkout (the code before the fix,
//     e.g. a `git worktree` of it), stopped early once its growth passes --max-growth-mb.
// Clients come from 127.0.1.1-10 (20 each with 200), within the default caps (500, 50 per address).
//
//   node --import tsx bench/stream-bench.ts [--clients 200] [--seconds 120] [--rate 200] [--keys 1000]
//     [--store pglite|postgres] [--before DIR] [--runs stalled,readers,before] [--write]
//
// Needs a build of each checkout (`npm run build`) and the test services (`bash scripts/services.sh up`).
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../tests/support/services';
import { cpuSeconds, metricValue, readingClient, rssBytes, stalledClient, startRenewals, startStreamServer } from '../tests/support/stream-load';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '120' },
    rate: { type: 'string', default: '200' },
    keys: { type: 'string', default: '1000' },
    before: { type: 'string' },
    runs: { type: 'string', default: 'stalled,readers,before' },
    store: { type: 'string', default: 'pglite' },
    'node-options': { type: 'string' },
    'max-growth-mb': { type: 'string', default: '1500' },
    write: { type: 'boolean', default: false },
  },
});
const CLIENTS = Number(values.clients);
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);
const KEYS = Number(values.keys);
const MAX_GROWTH = Number(values['max-growth-mb']) * 1e6;
const STORE = values.store === 'postgres' ? 'postgres' : 'pglite';
const NODE_OPTIONS = values['node-options'];
const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

type Result = {
  name: string;
  baseline: number;
  peak: number;
  end: number;
  seconds: number;
  stoppedEarly: boolean;
  /** The server exited (ran out of memory) this many seconds after the clients connected. */
  diedAfterS: number | null;
  busRate: number;
  monitorBytesPerS: number;
  clientBytesPerS: number | null;
  firstDropS: number | null;
  allDroppedS: number | null;
  dropped: number | null;
  cpu: number;
};

async function busSeq(url: string): Promise<number> {
  const body = (await (await fetch(`${url}/api/v1/leases?limit=1`)).json()) as { position: string };
  return Number(body.position.split('.')[1]);
}

async function run(name: string, root: string, port: number, kind: 'stalled' | 'readers'): Promise<Result> {
  const prefix = `bench-stream-${Math.random().toString(36).slice(2, 8)}:`;
  log(`${name}: starting the server (${root}) on port ${port}`);
  const server = await startStreamServer({ root, port, prefix, store: STORE, env: NODE_OPTIONS ? { NODE_OPTIONS } : {} });
  const load = await startRenewals({ prefix, keys: KEYS, perSecond: RATE });
  const clients: Awaited<ReturnType<typeof readingClient>>[] = [];
  const stalled: Awaited<ReturnType<typeof stalledClient>>[] = [];
  try {
    // One client that reads throughout: the stream's rate as a reader sees it.
    const monitor = await readingClient(port, '/api/v1/stream');
    await metricValue(server.url, 'leasehold_stream_clients{}'); // loads /metrics before the baseline
    await sleep(10_000);
    const warm: number[] = [];
    for (let i = 0; i < 10; i++, await sleep(1_000)) warm.push(rssBytes(server.pid));
    const baseline = median(warm);
    const seq0 = await busSeq(server.url);
    let lastSeq = seq0;
    let lastRenewed = load.renewed();
    let lastCpu = cpuSeconds(server.pid);
    const monitor0 = monitor.state.bytes;
    const cpu0 = cpuSeconds(server.pid);
    const started = performance.now();
    for (let i = 0; i < CLIENTS; i++) {
      const address = `127.0.1.${1 + (i % 10)}`;
      if (kind === 'stalled') stalled.push(await stalledClient(port, '/api/v1/stream', address));
      else clients.push(await readingClient(port, '/api/v1/stream', address));
    }
    log(`${name}: ${CLIENTS} ${kind === 'stalled' ? 'clients that do not read' : 'clients that read'} connected in ${((performance.now() - started) / 1000).toFixed(1)} s; RSS before ${(baseline / 1e6).toFixed(0)} MB`);
    const samples: number[] = [];
    let firstDropS: number | null = null;
    let allDroppedS: number | null = null;
    let dropped: number | null = null;
    let stoppedEarly = false;
    let diedAfterS: number | null = null;
    for (let s = 1; s <= SECONDS; s++) {
      await sleep(Math.max(0, started + s * 1000 - performance.now()));
      let rss: number;
      try {
        rss = rssBytes(server.pid);
      } catch {
        log(`${name}: the server exited after ${s} s`);
        diedAfterS = s;
        break;
      }
      samples.push(rss);
      if (s % 2 === 0) {
        dropped = await metricValue(server.url, 'leasehold_stream_dropped_total{}').catch(() => dropped);
        if (dropped !== null && dropped > 0) firstDropS ??= s;
        if (dropped !== null && dropped >= CLIENTS) allDroppedS ??= s;
      }
      if (s % 10 === 0) {
        // The server may be dying (out of memory): the next sample finds out.
        const seq = await busSeq(server.url).catch(() => lastSeq);
        let cpu: number;
        try {
          cpu = cpuSeconds(server.pid);
        } catch {
          continue;
        }
        log(`${name}: ${s} s, RSS ${(rss / 1e6).toFixed(0)} MB (${rss >= baseline ? '+' : ''}${((rss - baseline) / 1e6).toFixed(0)}), dropped ${dropped ?? '-'}, bus ${((seq - lastSeq) / 10).toFixed(0)} messages/s, renewals ${((load.renewed() - lastRenewed) / 10).toFixed(0)}/s, server CPU ${((cpu - lastCpu) / 10).toFixed(2)}`);
        lastSeq = seq;
        lastRenewed = load.renewed();
        lastCpu = cpu;
      }
      if (rss - baseline > MAX_GROWTH) {
        log(`${name}: growth past ${MAX_GROWTH / 1e6} MB after ${s} s: stopped`);
        stoppedEarly = true;
        break;
      }
    }
    const seconds = samples.length;
    const elapsed = (performance.now() - started) / 1000;
    const received = clients.reduce((sum, c) => sum + c.state.bytes, 0);
    const alive = diedAfterS === null;
    return {
      diedAfterS,
      name,
      baseline,
      peak: Math.max(...samples),
      end: median(samples.slice(-10)),
      seconds,
      stoppedEarly,
      busRate: alive ? ((await busSeq(server.url)) - seq0) / elapsed : (lastSeq - seq0) / Math.max(1, Math.floor(seconds / 10) * 10),
      monitorBytesPerS: (monitor.state.bytes - monitor0) / elapsed,
      clientBytesPerS: kind === 'readers' ? received / CLIENTS / elapsed : null,
      firstDropS,
      allDroppedS,
      dropped,
      cpu: alive ? (cpuSeconds(server.pid) - cpu0) / elapsed : NaN,
    };
  } finally {
    for (const c of [...clients, ...stalled]) c.socket.destroy();
    await load.stop();
    await server.stop();
  }
}

const runs = new Set(values.runs.split(','));
const results: Partial<Record<'stalled' | 'readers' | 'before', Result>> = {};
if (runs.has('stalled')) results.stalled = await run('stalled', ROOT, 3211, 'stalled');
if (runs.has('readers')) results.readers = await run('readers (peer)', ROOT, 3212, 'readers');
if (values.before && runs.has('before')) results.before = await run('stalled, before the fix', path.resolve(values.before), 3213, 'stalled');

const mb = (bytes: number) => `${bytes >= 0 ? '' : '−'}${Math.abs(Math.round(bytes / 1e6))} MB`;
const row = (r: Result, what: string, hasMetric: boolean) =>
  `| ${what} | ${r.busRate.toFixed(0)} | ${(r.monitorBytesPerS / 1e3).toFixed(0)} KB/s | ${mb(r.baseline)} | ${mb(r.peak)}${r.stoppedEarly ? ` (stopped after ${r.seconds} s)` : ''}${r.diedAfterS !== null ? ` (then the server ran out of memory, ${r.diedAfterS} s after the clients connected)` : ''} | ${mb(r.peak - r.baseline)} | ${mb(r.end - r.baseline)} | ${
    !hasMetric ? 'not measured (no such metric)' : r.dropped === null ? 'none' : `${r.dropped}${r.firstDropS !== null ? `, the first after ${r.firstDropS} s, all after ${r.allDroppedS ?? '–'} s` : ''}`
  } | ${Number.isNaN(r.cpu) ? '–' : r.cpu.toFixed(2)} |`;
const { stalled: ours, readers: peer, before } = results;
const ratios = [
  ours && peer ? `growth at peak, clients that do not read / clients that read: ${((ours.peak - ours.baseline) / Math.max(1, peer.peak - peer.baseline)).toFixed(2)}` : null,
  ours && before
    ? `before the fix / now: ${before.stoppedEarly || before.diedAfterS !== null ? 'at least ' : ''}${((before.peak - before.baseline) / Math.max(1, ours.peak - ours.baseline)).toFixed(1)}`
    : null,
].filter(Boolean);
const output = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; \`npm start\`'s server on a fresh ${STORE === 'pglite' ? 'embedded (PGlite)' : 'PostgreSQL'} store, observing a Redis prefix with ${KEYS} locks renewed ${RATE} times a second in all; ${CLIENTS} clients for ${SECONDS} s after a 20 s warm-up, from 10 loopback addresses; one more client reads throughout (its rate below). RSS is the \`next start\` process's, sampled every second; growth is from the median of the 10 s before the clients connected.${NODE_OPTIONS ? ` The server runs with NODE_OPTIONS=${NODE_OPTIONS}.` : ''}`,
  '',
  '| run | bus messages/s | stream, to a reader | RSS before | peak | growth at peak | growth at the end (median of the last 10 s) | dropped for not reading | server CPU (cores) |',
  '|---|---:|---:|---:|---:|---:|---:|---|---:|',
  ...(ours ? [row(ours, `${CLIENTS} clients that do not read`, true)] : []),
  ...(peer ? [row(peer, `peer: ${CLIENTS} clients that read (each got ${((peer.clientBytesPerS ?? 0) / 1e3).toFixed(0)} KB/s)`, true)] : []),
  ...(before ? [row(before, `${CLIENTS} clients that do not read, before the fix (${values.before})`, false)] : []),
  ...(ratios.length ? ['', `Ratios: ${ratios.join('; ')}.`] : []),
].join('\n');
console.log(output);
if (values.write) {
  // One block per heap setting, in the same section.
  const marker = NODE_OPTIONS ? 'stream-bench-node-options' : 'stream-bench';
  const file = path.join(ROOT, 'bench', 'RESULTS.md');
  const text = readFileSync(file, 'utf8');
  const block = `<!-- ${marker}:start -->\n${output}\n<!-- ${marker}:end -->`;
  const existing = new RegExp(`<!-- ${marker}:start -->[\\s\\S]*<!-- ${marker}:end -->`);
  writeFileSync(
    file,
    existing.test(text)
      ? text.replace(existing, block)
      : text.includes('<!-- stream-bench:end -->')
        ? text.replace('<!-- stream-bench:end -->', `<!-- stream-bench:end -->\n\n${block}`)
        : `${text.trimEnd()}\n\n## The live stream with clients that do not read (issue 13)\n\n\`node --import tsx bench/stream-bench.ts --before <a built checkout of the code before> --write\`\n\n${block}\n`,
  );
  log('wrote bench/RESULTS.md');
}
