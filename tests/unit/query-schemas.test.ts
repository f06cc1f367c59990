// Each route's query schema (lib/api/query-schemas.ts) through parseQuery (lib/api/params.ts):
// the 400 names the parameter and says what it must be, in the words the API has always used
// (docs/api.md, tests/e2e/api-fuzz.spec.ts, tests/e2e/observe.spec.ts); parameters a route
// does not name are ignored.
import { describe, expect, it } from 'vitest';
import { InvalidParameterError, parseLeasePath, parseQuery } from '../../lib/api/params';
import { failoversCsvQuery, failoversQuery, leaseEventsQuery, leaseRenewalsQuery, leasesQuery, streamQuery } from '../../lib/api/query-schemas';
import { InvalidLeaseIdError } from '../../lib/domain/lease-id';

const search = (query: string) => new URLSearchParams(query);
const refusal = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    if (error instanceof InvalidParameterError) return { parameter: error.parameter, message: error.message };
    throw error;
  }
  throw new Error('not refused');
};

describe('the messages of a refused parameter', () => {
  it.each([
    [failoversQuery, 'since=yesterday', 'since', 'The query parameter "since" must be an ISO time (2026-12-02T06:00:00Z) from year 1 to 9999, or a duration such as 15m, 6h or 7d (1-6 digits), not "yesterday".'],
    [failoversQuery, 'since=999999d', 'since', 'The query parameter "since" must be a duration that reaches back no further than year 1, not "999999d".'],
    [failoversQuery, 'cursor=-1', 'cursor', 'The query parameter "cursor" must be the "next" value of a previous page (a whole number of at most 19 digits, below 2^63), not "-1".'],
    [failoversQuery, 'cursor=9999999999999999999', 'cursor', 'The query parameter "cursor" must be the "next" value of a previous page (a whole number of at most 19 digits, below 2^63), not "9999999999999999999".'],
    [failoversQuery, 'limit=1e3', 'limit', 'The query parameter "limit" must be a whole number from 1 to 5000, not "1e3".'],
    [failoversQuery, 'limit=5001', 'limit', 'The query parameter "limit" must be a whole number from 1 to 5000, not "5001".'],
    [failoversQuery, 'limit=1&limit=2', 'limit', 'The query parameter "limit" must be given once, not 2 times.'],
    [failoversCsvQuery, `q=${'x'.repeat(201)}`, 'q', 'The query parameter "q" must be at most 200 characters long, not 201.'],
    [failoversCsvQuery, 'q=%00', 'q', 'The query parameter "q" must be text without control characters, not "\\x00".'],
    [failoversCsvQuery, 'cause=nope', 'cause', 'The query parameter "cause" must be one of expired, taken_over, released, force_expired, force_released, unknown, not "nope".'],
    [failoversCsvQuery, 'change=same', 'change', 'The query parameter "change" must be one of other, restart, not "same".'],
    [failoversCsvQuery, 'kind=mutex', 'kind', 'The query parameter "kind" must be one of lock, election, advisory, not "mutex".'],
    [failoversCsvQuery, 'limit=100001', 'limit', 'The query parameter "limit" must be a whole number from 1 to 100000, not "100001".'],
    [leasesQuery, 'state=sideways', 'state', 'The query parameter "state" must be one of held, free, expired, unknown, stale, problems, not "sideways".'],
    [leasesQuery, 'state=%E2%80%AEheld', 'state', 'The query parameter "state" must be one of held, free, expired, unknown, stale, problems, not "\u202eheld".'],
    [leasesQuery, 'sort=newest', 'sort', 'The query parameter "sort" must be one of problems, key, remaining, token, holder, transitions, not "newest".'],
    [leasesQuery, 'cursor=12345', 'cursor', 'The query parameter "cursor" must be the "next" value of an earlier page of this list, not "12345".'],
    [leasesQuery, 'source=..%2Fetc', 'source', 'The query parameter "source" must be a source name, not "../etc".'],
    [leasesQuery, 'limit=NaN', 'limit', 'The query parameter "limit" must be a whole number from 1 to 100000, not "NaN".'],
    [leaseEventsQuery, 'types=expired,nope', 'types', 'The query parameter "types" must be a comma-separated list of acquired, renewed, released, expired, taken_over, force_expired, force_released, token_regression, source_down, source_up, observation_gap, unseen_grants, not "nope".'],
    [leaseEventsQuery, 'limit=1001', 'limit', 'The query parameter "limit" must be a whole number from 1 to 1000, not "1001".'],
    [leaseRenewalsQuery, 'since=2026-02-30', 'since', 'The query parameter "since" must be an ISO time (2026-12-02T06:00:00Z) from year 1 to 9999, or a duration such as 15m, 6h or 7d (1-6 digits), not "2026-02-30".'],
  ] as const)('%#: %s', (schema, query, parameter, message) => {
    expect(refusal(() => parseQuery(schema, search(query)))).toEqual({ parameter, message });
  });

  it('several bad parameters: the first the route checks is the one named', () => {
    expect(refusal(() => parseQuery(leasesQuery, search('limit=0&source=%00&state=x'))).parameter).toBe('state');
    expect(refusal(() => parseQuery(leaseEventsQuery, search('limit=0&cursor=x&types=x&since=x'))).parameter).toBe('since');
    expect(refusal(() => parseQuery(failoversCsvQuery, search('q=%00&change=x&cause=x&limit=0'))).parameter).toBe('limit');
    // Given twice is checked before what the value is.
    expect(refusal(() => parseQuery(leasesQuery, search('state=x&state=y'))).message).toBe('The query parameter "state" must be given once, not 2 times.');
  });
});

describe('what a route takes', () => {
  it('parameters it does not name are ignored, whatever they hold (__proto__ included)', () => {
    expect(parseQuery(leasesQuery, search('range=%00&__proto__=x&constructor=1&x%00=1'))).toEqual({ limit: 10_000 });
    expect(parseQuery(failoversQuery, search('q=%00&types=nope'))).toEqual({ since: undefined, limit: 200, before: undefined });
  });

  it('absent or empty: not given, the default where there is one', () => {
    expect(parseQuery(leaseEventsQuery, search('since=&types=&cursor=&limit='))).toEqual({ since: undefined, types: undefined, before: undefined, limit: 100 });
    expect(parseQuery(failoversCsvQuery, search('cause=&change=&kind=&q='))).toEqual({ since: undefined, limit: 100_000, filter: { text: null, cause: null, change: null, kind: null } });
  });

  it('values as the queries take them', () => {
    expect(parseQuery(leaseEventsQuery, search('since=2026-12-02T06:00:00Z&types=expired,%20acquired&cursor=42&limit=007'))).toEqual({
      since: new Date('2026-12-02T06:00:00Z'),
      types: ['expired', 'acquired'],
      before: 42n,
      limit: 7,
    });
    expect(parseQuery(failoversCsvQuery, search('cause=expired&change=restart&kind=election&q=Server'))).toEqual({ since: undefined, limit: 100_000, filter: { text: 'Server', cause: 'expired', change: 'restart', kind: 'election' } });
    const before = Date.now();
    const since = parseQuery(leaseRenewalsQuery, search('since=15m')).since!.getTime();
    expect(since).toBeGreaterThanOrEqual(before - 15 * 60_000);
    expect(since).toBeLessThanOrEqual(Date.now() - 15 * 60_000);
  });

  it("the stream's parameters are taken as given, never refused: the first of each, an empty one kept", () => {
    expect(parseQuery(streamQuery, search(''))).toEqual({ after: null, source: null, lease: null, types: null });
    expect(parseQuery(streamQuery, search(`after=a&after=b&source=%00&lease=${'x'.repeat(5_000)}&types=source,nope`))).toEqual({ after: 'a', source: '\u0000', lease: 'x'.repeat(5_000), types: 'source,nope' });
    expect(parseQuery(streamQuery, search('after='))).toEqual({ after: '', source: null, lease: null, types: null });
  });
});

describe('lease paths', () => {
  it('the whole path is an id; /events and /renewals carry their query, checked before the store is asked', () => {
    expect(parseLeasePath(['demo', 'x'], search('since=nope'))).toEqual({ whole: 'demo/x', sub: null });
    expect(parseLeasePath(['demo', 'x', 'events'], search('limit=5'))).toEqual({
      whole: 'demo/x/events',
      sub: 'events',
      prefix: ['demo', 'x'],
      query: { since: undefined, types: undefined, before: undefined, limit: 5 },
    });
    expect(parseLeasePath(['demo', 'renewals'], search(''))).toEqual({ whole: 'demo/renewals', sub: 'renewals', prefix: ['demo'], since: undefined });
    expect(parseLeasePath(['demo/x/events'], search('since=nope'))).toEqual({ whole: 'demo/x/events', sub: null });
    expect(refusal(() => parseLeasePath(['demo', 'x', 'renewals'], search('since=999999d'))).parameter).toBe('since');
    expect(() => parseLeasePath(['demo', 'a\u0000b', 'events'], search('since=nope'))).toThrow(InvalidLeaseIdError);
  });
});
