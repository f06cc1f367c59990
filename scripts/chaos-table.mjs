// Prints the chaos suite's last results (.leasehold/chaos/results.jsonl, one row per fault,
// written by tests/chaos/world.ts) as the Markdown table docs/reliability.md shows.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const file = path.join(root, '.leasehold', 'chaos', 'results.jsonl');
if (!existsSync(file)) {
  console.log('no chaos results yet (.leasehold/chaos/results.jsonl): run `npx vitest run --project chaos`');
  process.exit(0);
}
const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
const columns = [
  ['Fault', (r) => r.fault],
  ['s', (r) => r.seconds],
  ['Steady leases', (r) => r.steadyLeases],
  ['Events checked', (r) => r.eventsChecked],
  ['Invented', (r) => r.invented],
  ['Stale, right last read', (r) => r.staleSeen],
  ['source_down / up', (r) => `${r.sourceDown} / ${r.sourceUp}`],
  ['Resumed after (ms)', (r) => r.resumedMs ?? '-'],
  ['Written twice', (r) => r.writtenTwice],
  ['Alerts / webhook-ids / requests', (r) => `${r.alerts} / ${r.webhookIds} / ${r.receipts}`],
  ['Force actions', (r) => r.actions],
  ['Audited once', (r) => (r.auditedOnce ? 'yes' : 'NO')],
];
console.log(`| ${columns.map(([name]) => name).join(' | ')} |`);
console.log(`|${columns.map(([, ], i) => (i === 0 ? '---' : '---:')).join('|')}|`);
for (const row of rows) console.log(`| ${columns.map(([, value]) => String(value(row))).join(' | ')} |`);
