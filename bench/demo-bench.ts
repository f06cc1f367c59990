// Benchmark: the embedded demo as `npm start` runs it on a built tree, from an empty data
// directory.
//   - start: from spawning scripts/start.ts to the overview answering 200, and to the demo's
//     scheduler lease appearing in the lease list;
//   - memory: the resident size of the whole process tree (start.ts and `next start`, where
//     the fleet, PGlite and the collector live), sampled every second for --seconds;
//   - the peer, in the same run: the same server on an empty store with the demo off
//     (LEASEHOLD_DEMO=off): what the demo adds.
//
//   node --import tsx bench/demo-bench.ts [--seconds 180] [--write]
//
// Needs a build (`npm run build`); no services.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../tests/support/services';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '180' }, write: { type: 'boolean', default: false } } });
const SECONDS = Number(values.seconds);
const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process and all its descendants, and of the largest one alone, in bytes (Linux /proc). */
function treeRss(root: number): { total: number; largest: number } {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone
    }
  }
  let total = 0;
  let largest = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    try {
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (rss) {
        total += Number(rss[1]) * 1024;
        largest = Math.max(largest, Number(rss[1]) * 1024);
      }
    } catch {
      // gone
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return { total, largest };
}

async function run(demo: boolean, port: number, seconds: number) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-demo-bench-'));
  const started = performance.now();
  const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, LEASEHOLD_ANONYMOUS_ROLE: 'viewer', PORT: String(port), HOST: '127.0.0.1', LEASEHOLD_DATA_DIR: dataDir, DATABASE_URL: undefined, LEASEHOLD_CONFIG: undefined, LEASEHOLD_DEMO: demo ? undefined : 'off' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  let overviewMs = 0;
  let schedulerMs = 0;
  let peak = 0;
  let serverPeak = 0;
  try {
    for (;;) {
      if (performance.now() - started > 120_000) throw new Error('no overview within 2 minutes');
      const ok = await fetch(`${base}/`).then((r) => r.ok, () => false);
      if (ok) break;
      await sleep(50);
    }
    overviewMs = performance.now() - started;
    if (demo) {
      for (;;) {
        if (performance.now() - started > 120_000) throw new Error('no scheduler lease within 2 minutes');
        const body = (await fetch(`${base}/api/v1/leases?q=weekly-digest-scheduler`).then((r) => r.json(), () => ({ leases: [] }))) as { leases: { state: string }[] };
        if (body.leases.some((l) => l.state === 'held')) break;
        await sleep(100);
      }
      schedulerMs = performance.now() - started;
    }
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      const rss = treeRss(server.pid!);
      peak = Math.max(peak, rss.total);
      serverPeak = Math.max(serverPeak, rss.largest);
      await sleep(1_000);
    }
    const { total: final, largest: serverFinal } = treeRss(server.pid!);
    const digest = demo ? ((await (await fetch(`${base}/api/v1/demo`)).json()) as { digest: { weeksCompleted: number; duplicatesDelivered: number } }).digest : null;
    return { overviewMs, schedulerMs, peak: Math.max(peak, final), final, serverPeak: Math.max(serverPeak, serverFinal), serverFinal, digest };
  } finally {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const demo = await run(true, 3196, SECONDS);
log(`demo: overview ${demo.overviewMs.toFixed(0)} ms, scheduler lease ${demo.schedulerMs.toFixed(0)} ms, RSS peak ${(demo.peak / 1e6).toFixed(0)} MB (server ${(demo.serverPeak / 1e6).toFixed(0)}), final ${(demo.final / 1e6).toFixed(0)} MB (server ${(demo.serverFinal / 1e6).toFixed(0)}), ${JSON.stringify(demo.digest)}`);
const peer = await run(false, 3197, 20);
log(`peer (demo off): overview ${peer.overviewMs.toFixed(0)} ms, RSS peak ${(peer.peak / 1e6).toFixed(0)} MB`);

const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;
const output = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}; a built tree, an empty data directory each time, no services.`,
  '',
  '| | overview answers | scheduler lease held | server process, peak | at the end | process tree, peak | at the end |',
  '|---|---:|---:|---:|---:|---:|---:|',
  `| \`npm start\` with the demo (${SECONDS} s) | ${(demo.overviewMs / 1000).toFixed(1)} s | ${(demo.schedulerMs / 1000).toFixed(1)} s | ${mb(demo.serverPeak)} | ${mb(demo.serverFinal)} | ${mb(demo.peak)} | ${mb(demo.final)} |`,
  `| peer: the same, \`LEASEHOLD_DEMO=off\` (20 s) | ${(peer.overviewMs / 1000).toFixed(1)} s | | ${mb(peer.serverPeak)} | ${mb(peer.serverFinal)} | ${mb(peer.peak)} | ${mb(peer.final)} |`,
  '',
  `The server process is \`next start\`, which holds the fleet, PGlite and the collector; the tree adds scripts/start.ts, the launcher that waits for it. During the run the demo completed ${demo.digest?.weeksCompleted ?? 0} week(s) of digests with ${demo.digest?.duplicatesDelivered ?? '?'} duplicates.`,
].join('\n');
console.log(output);
if (values.write) {
  const file = path.join(ROOT, 'bench', 'RESULTS.md');
  const text = readFileSync(file, 'utf8');
  const section = `<!-- demo-bench:start -->\n${output}\n<!-- demo-bench:end -->`;
  writeFileSync(
    file,
    text.includes('<!-- demo-bench:start -->')
      ? text.replace(/<!-- demo-bench:start -->[\s\S]*<!-- demo-bench:end -->/, section)
      : `${text.trimEnd()}\n\n## The embedded demo (issue 6)\n\n\`node --import tsx bench/demo-bench.ts --write\`\n\n${section}\n`,
  );
  log('wrote bench/RESULTS.md');
}
