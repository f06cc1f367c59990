// The failovers export without a store (lib/queries/failovers.ts): paging, the page's filters,
// the limit and when it says truncated, the client going away, and the file it makes.
import { describe, expect, it } from 'vitest';
import { FAILOVER_CSV_HEADER } from '../domain/failover-stats';
import { collectFailovers, failoversCsvFile, FAILOVERS_CSV_PAGE } from './failovers';
import type { FailoverView } from './leases';

const failover = (id: number, cause: FailoverView['cause'] = 'expired', restart = false): FailoverView => ({
  id: String(id),
  leaseId: `demo/job-${id % 3}`,
  type: 'acquired',
  at: new Date(Date.UTC(2026, 11, 3, 0, 0, id)).toISOString(),
  holder: `node-${id}:0000000${id % 10}`,
  previousHolder: `node-${id - 1}:00000001`,
  token: String(id),
  previousToken: String(id - 1),
  gapMs: 100,
  detail: { cause },
  cause,
  restart,
  kind: id % 4 === 0 ? 'election' : 'lock',
});

/** A store of `count` failovers, newest first, read a page at a time (ids count down), as listFailovers reads. */
function store(count: number) {
  const all = Array.from({ length: count }, (_, i) => failover(count - i, i % 2 ? 'taken_over' : 'expired', i % 5 === 0));
  const reads: { limit: number; before?: bigint }[] = [];
  const readPage = async (page: { since?: Date; limit: number; before?: bigint }) => {
    reads.push({ limit: page.limit, before: page.before });
    const rest = all.filter((f) => page.before === undefined || BigInt(f.id) < page.before);
    const failovers = rest.slice(0, page.limit);
    return { failovers, next: rest.length > page.limit ? failovers.at(-1)!.id : null };
  };
  return { all, reads, readPage };
}
const NO_FILTER = { text: null, cause: null, change: null };

describe('collectFailovers', () => {
  it('pages through the store until the range ends', async () => {
    const s = store(FAILOVERS_CSV_PAGE * 2 + 10);
    const found = await collectFailovers(s.readPage, { limit: 100_000, filter: NO_FILTER });
    expect(found!.rows.map((f) => f.id)).toEqual(s.all.map((f) => f.id));
    expect(found!.truncated).toBe(false);
    expect(s.reads).toEqual([
      { limit: FAILOVERS_CSV_PAGE, before: undefined },
      { limit: FAILOVERS_CSV_PAGE, before: BigInt(s.all[FAILOVERS_CSV_PAGE - 1]!.id) },
      { limit: FAILOVERS_CSV_PAGE, before: BigInt(s.all[FAILOVERS_CSV_PAGE * 2 - 1]!.id) },
    ]);
  });

  it("keeps the rows that match the page's filters", async () => {
    const s = store(40);
    const found = await collectFailovers(s.readPage, { limit: 100_000, filter: { text: null, cause: 'taken_over', change: 'restart' } });
    expect(found!.rows.length).toBeGreaterThan(0);
    expect(found!.rows).toEqual(s.all.filter((f) => f.cause === 'taken_over' && f.restart));
    const elections = await collectFailovers(s.readPage, { limit: 100_000, filter: { text: null, cause: null, change: null, kind: 'election' } });
    expect(elections!.rows.length).toBe(10);
    expect(elections!.rows.every((f) => f.kind === 'election')).toBe(true);
  });

  it('at most `limit` rows: truncated when more matched or the store has more', async () => {
    const exact = await collectFailovers(store(10).readPage, { limit: 10, filter: NO_FILTER });
    expect([exact!.rows.length, exact!.truncated]).toEqual([10, false]);
    const cut = await collectFailovers(store(11).readPage, { limit: 10, filter: NO_FILTER });
    expect([cut!.rows.length, cut!.truncated]).toEqual([10, true]);
    const s = store(FAILOVERS_CSV_PAGE + 1);
    const atPage = await collectFailovers(s.readPage, { limit: FAILOVERS_CSV_PAGE, filter: NO_FILTER });
    expect([atPage!.rows.length, atPage!.truncated, s.reads.length]).toEqual([FAILOVERS_CSV_PAGE, true, 1]);
  });

  it('null, and no more reads, once the client has gone away', async () => {
    const s = store(FAILOVERS_CSV_PAGE * 3);
    const controller = new AbortController();
    const readPage = async (page: { limit: number; before?: bigint }) => {
      const result = await s.readPage(page);
      controller.abort();
      return result;
    };
    expect(await collectFailovers(readPage, { limit: 100_000, filter: NO_FILTER }, controller.signal)).toBeNull();
    expect(s.reads.length).toBe(1);
  });
});

describe('failoversCsvFile', () => {
  it('a byte-order mark, the header, a row each; named with the time', () => {
    const file = failoversCsvFile([failover(2), failover(1)], true, new Date('2026-12-03T01:44:07.902Z'));
    expect(file.filename).toBe('leasehold-failovers-2026-12-03-01-44-07.csv');
    expect(file.csv.startsWith(`\uFEFF${FAILOVER_CSV_HEADER.join(',')}`)).toBe(true);
    expect(file.csv.trimEnd().split('\r\n')).toHaveLength(3);
    expect([file.rows, file.truncated]).toEqual([2, true]);
  });
});
