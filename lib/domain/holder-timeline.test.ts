import { describe, expect, it } from 'vitest';
import { holderTimeline, timelineSummary, tokenPoints, tokenSummary, type TimelineEvent, type TimelineLease } from './holder-timeline';

const T0 = Date.parse('2026-12-02T06:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const ms = (seconds: number) => T0 + seconds * 1000;

function event(type: TimelineEvent['type'], seconds: number, fields: Partial<TimelineEvent> = {}): TimelineEvent {
  return { type, at: at(seconds), holder: null, previousHolder: null, token: null, previousToken: null, gapMs: null, detail: null, ...fields };
}
const held = (holder: string, token: string | null, fields: Partial<TimelineLease> = {}): TimelineLease => ({
  state: 'held',
  holder,
  token,
  acquiredAt: null,
  observedAt: at(100),
  stale: false,
  ...fields,
});
const free = (fields: Partial<TimelineLease> = {}): TimelineLease => ({ state: 'free', holder: null, token: null, acquiredAt: null, observedAt: at(100), stale: false, ...fields });

type Row = [holder: string, token: string | null, from: number, to: number, endedBy: string | null];
const rows = (timeline: ReturnType<typeof holderTimeline>): Row[] =>
  timeline.segments.map((s) => [s.holder, s.token, (s.from - T0) / 1000, (s.to - T0) / 1000, s.endedBy]);
const gaps = (timeline: ReturnType<typeof holderTimeline>) => timeline.gaps.map((g) => [g.kind, (g.from - T0) / 1000, (g.to - T0) / 1000]);
const failovers = (timeline: ReturnType<typeof holderTimeline>) => timeline.failovers.map((f) => [f.from, f.to, f.cause, (f.at - T0) / 1000, f.gapMs]);

describe('holderTimeline', () => {
  const cases: {
    name: string;
    events: TimelineEvent[];
    lease: TimelineLease | null;
    segments: Row[];
    gaps: (string | number)[][];
    failovers: (string | number | null)[][];
  }[] = [
    {
      name: 'no events, held the whole range',
      events: [],
      lease: held('a', '7'),
      segments: [['a', '7', 0, 100, null]],
      gaps: [],
      failovers: [],
    },
    {
      name: 'no events, acquired inside the range (events lag): free before it',
      events: [],
      lease: held('a', '7', { acquiredAt: at(40) }),
      segments: [['a', '7', 40, 100, null]],
      gaps: [['free', 0, 40]],
      failovers: [],
    },
    {
      name: 'no events, free the whole range',
      events: [],
      lease: free(),
      segments: [],
      gaps: [['free', 0, 100]],
      failovers: [],
    },
    {
      name: 'taken over directly: one failover, no gap',
      events: [event('taken_over', 30, { holder: 'b', previousHolder: 'a', token: '8', previousToken: '7', gapMs: 0 })],
      lease: held('b', '8'),
      segments: [
        ['a', '7', 0, 30, 'taken_over'],
        ['b', '8', 30, 100, null],
      ],
      gaps: [],
      failovers: [['a', 'b', 'taken_over', 30, 0]],
    },
    {
      name: 'expired then acquired by someone else: a failover with its gap',
      events: [
        event('expired', 20, { previousHolder: 'a', previousToken: '7' }),
        event('acquired', 25, { holder: 'b', token: '8', previousHolder: 'a', previousToken: '7', gapMs: 5000, detail: { cause: 'expired' } }),
      ],
      lease: held('b', '8'),
      segments: [
        ['a', '7', 0, 20, 'expired'],
        ['b', '8', 25, 100, null],
      ],
      gaps: [['free', 20, 25]],
      failovers: [['a', 'b', 'expired', 25, 5000]],
    },
    {
      name: 'released and re-acquired by the same holder: no failover',
      events: [
        event('released', 10, { previousHolder: 'a', previousToken: '7' }),
        event('acquired', 12, { holder: 'a', token: '8', previousHolder: 'a', previousToken: '7', gapMs: 2000 }),
      ],
      lease: held('a', '8'),
      segments: [
        ['a', '7', 0, 10, 'released'],
        ['a', '8', 12, 100, null],
      ],
      gaps: [['free', 10, 12]],
      failovers: [],
    },
    {
      name: 'first event an acquisition: free before it',
      events: [event('acquired', 50, { holder: 'a', token: '1' })],
      lease: held('a', '1'),
      segments: [['a', '1', 50, 100, null]],
      gaps: [['free', 0, 50]],
      failovers: [],
    },
    {
      name: 'first sight of the lease: unobserved before it, not free',
      events: [event('acquired', 50, { holder: 'a', token: '1', detail: { firstSeen: true } })],
      lease: held('a', '1'),
      segments: [['a', '1', 50, 100, null]],
      gaps: [['unobserved', 0, 50]],
      failovers: [],
    },
    {
      name: 'released at the end, the lease is free now',
      events: [event('acquired', 10, { holder: 'a', token: '1' }), event('released', 60, { previousHolder: 'a', previousToken: '1' })],
      lease: free(),
      segments: [['a', '1', 10, 60, 'released']],
      gaps: [
        ['free', 0, 10],
        ['free', 60, 100],
      ],
      failovers: [],
    },
    {
      name: 'force-expired, then acquired by another: the forced end is the cause',
      events: [
        event('force_expired', 40, { previousHolder: 'a', previousToken: '7', token: '8' }),
        event('acquired', 41, { holder: 'b', token: '9', previousHolder: 'a', previousToken: '7', gapMs: 1000 }),
      ],
      lease: held('b', '9'),
      segments: [
        ['a', '7', 0, 40, 'force_expired'],
        ['b', '9', 41, 100, null],
      ],
      gaps: [['free', 40, 41]],
      failovers: [['a', 'b', 'force_expired', 41, 1000]],
    },
    {
      name: 'observation gap with a new holder after it: unobserved, then a failover of unknown gap',
      events: [
        event('observation_gap', 70, {
          holder: 'b',
          token: '9',
          previousHolder: 'a',
          previousToken: '7',
          detail: { lastSeenAt: at(50), seenAgainAt: at(70), before: { holder: 'a', token: '7' }, after: { holder: 'b', token: '9' } },
        }),
      ],
      lease: held('b', '9'),
      segments: [
        ['a', '7', 0, 50, 'observation_gap'],
        ['b', '9', 70, 100, null],
      ],
      gaps: [['unobserved', 50, 70]],
      failovers: [['a', 'b', 'observation_gap', 70, null]],
    },
    {
      name: 'stale lease: held until its last read, then unobserved (unknown is not lost)',
      events: [event('acquired', 10, { holder: 'a', token: '3' })],
      lease: held('a', '3', { stale: true, observedAt: at(80) }),
      segments: [['a', '3', 10, 80, null]],
      gaps: [
        ['free', 0, 10],
        ['unobserved', 80, 100],
      ],
      failovers: [],
    },
    {
      name: 'the lease is ahead of the events: a new holder not yet in them',
      events: [event('acquired', 10, { holder: 'a', token: '3' })],
      lease: held('b', '4', { acquiredAt: at(90) }),
      segments: [
        ['a', '3', 10, 90, 'replaced'],
        ['b', '4', 90, 100, null],
      ],
      gaps: [['free', 0, 10]],
      failovers: [['a', 'b', 'replaced', 90, null]],
    },
    {
      name: 'events out of time order (expiry estimate after the next grant): time never runs backwards',
      events: [
        event('expired', 30, { previousHolder: 'a', previousToken: '1' }),
        event('acquired', 29, { holder: 'b', token: '2', previousHolder: 'a', previousToken: '1', gapMs: 0 }),
      ],
      lease: held('b', '2'),
      segments: [
        ['a', '1', 0, 30, 'expired'],
        ['b', '2', 30, 100, null],
      ],
      gaps: [],
      failovers: [['a', 'b', 'expired', 30, 0]],
    },
    {
      name: 'renewals, token regressions and source events do not cut segments',
      events: [
        event('acquired', 10, { holder: 'a', token: '5' }),
        event('renewed', 20, { holder: 'a', token: '5' }),
        event('token_regression', 30, { holder: 'a', token: '4', previousToken: '5' }),
        event('source_down', 40),
        event('source_up', 50),
      ],
      lease: held('a', '5'),
      segments: [['a', '5', 10, 100, null]],
      gaps: [['free', 0, 10]],
      failovers: [],
    },
    {
      name: 'an event before the range start is clipped to it',
      events: [event('acquired', -30, { holder: 'a', token: '1' })],
      lease: held('a', '1'),
      segments: [['a', '1', 0, 100, null]],
      gaps: [],
      failovers: [],
    },
  ];

  it.each(cases)('$name', ({ events, lease, segments, gaps: expectedGaps, failovers: expectedFailovers }) => {
    const timeline = holderTimeline(events, lease, ms(0), ms(100));
    expect(rows(timeline)).toEqual(segments);
    expect(gaps(timeline)).toEqual(expectedGaps);
    expect(failovers(timeline)).toEqual(expectedFailovers);
  });

  it.each([
    { name: 'one holder', events: [] as TimelineEvent[], lease: held('a', '1'), summary: '1 holder, 0 failovers' },
    { name: 'nobody', events: [] as TimelineEvent[], lease: free(), summary: 'no holder, 0 failovers' },
    {
      name: 'a failover with a gap',
      events: [event('expired', 20, { previousHolder: 'a' }), event('acquired', 25, { holder: 'b', previousHolder: 'a', gapMs: 5000 })],
      lease: held('b', null),
      summary: '2 holders, 1 failover, longest time without a holder 5.0 s',
    },
  ])('summary: $name', ({ events, lease, summary }) => {
    expect(timelineSummary(holderTimeline(events, lease, ms(0), ms(100)))).toBe(summary);
  });
});

describe('tokenPoints', () => {
  const cases: { name: string; events: TimelineEvent[]; points: [string, string][]; summary: string }[] = [
    { name: 'nothing', events: [], points: [], summary: 'no grants with a fencing token in this range' },
    {
      name: 'grants going up',
      events: [
        event('acquired', 1, { holder: 'a', token: '1' }),
        event('expired', 2, { previousHolder: 'a', previousToken: '1' }),
        event('acquired', 3, { holder: 'b', token: '2' }),
        event('taken_over', 4, { holder: 'c', token: '57' }),
      ],
      points: [
        ['1', 'grant'],
        ['2', 'grant'],
        ['57', 'grant'],
      ],
      summary: '3 grants, tokens 1 → 57, no regression',
    },
    {
      name: 'unfenced grants are skipped',
      events: [event('acquired', 1, { holder: 'a', token: null })],
      points: [],
      summary: 'no grants with a fencing token in this range',
    },
    {
      name: 'a forced bump is its own kind; with no new token, the one it ended',
      events: [
        event('acquired', 1, { holder: 'a', token: '10' }),
        event('force_expired', 2, { previousHolder: 'a', previousToken: '10', token: '11' }),
        event('force_released', 3, { previousHolder: 'a', previousToken: '11' }),
        event('acquired', 4, { holder: 'b', token: '12' }),
      ],
      points: [
        ['10', 'grant'],
        ['11', 'forced'],
        ['11', 'forced'],
        ['12', 'grant'],
      ],
      summary: '2 grants, 2 forced bumps, tokens 10 → 12, no regression',
    },
    {
      name: 'the collector flags a regression beside the grant: one red point',
      events: [
        event('acquired', 1, { holder: 'a', token: '10' }),
        event('token_regression', 5, { holder: 'b', token: '4', previousToken: '10' }),
        event('acquired', 4, { holder: 'b', token: '4', previousHolder: 'a', previousToken: '10' }),
      ],
      points: [
        ['10', 'grant'],
        ['4', 'regression'],
      ],
      summary: '2 grants, tokens 4 → 10, 1 regression',
    },
    {
      name: 'a lower grant is a regression even unflagged, compared exactly beyond 2^53',
      events: [
        event('acquired', 1, { holder: 'a', token: '9007199254740993' }),
        event('acquired', 2, { holder: 'b', token: '9007199254740992' }),
        event('acquired', 3, { holder: 'c', token: '9007199254740994' }),
      ],
      points: [
        ['9007199254740993', 'grant'],
        ['9007199254740992', 'regression'],
        ['9007199254740994', 'grant'],
      ],
      summary: '3 grants, tokens 9007199254740992 → 9007199254740994, 1 regression',
    },
    {
      name: 'malformed tokens are skipped',
      events: [event('acquired', 1, { holder: 'a', token: '12abc' })],
      points: [],
      summary: 'no grants with a fencing token in this range',
    },
  ];

  it.each(cases)('$name', ({ events, points, summary }) => {
    const result = tokenPoints(events);
    expect(result.map((p) => [p.token, p.kind])).toEqual(points);
    expect(tokenSummary(result)).toBe(summary);
  });

  it('keeps the exact token string while plotting a Number', () => {
    const [point] = tokenPoints([event('acquired', 1, { holder: 'a', token: '18446744073709551615' })]);
    expect(point!.token).toBe('18446744073709551615');
    expect(point!.value).toBe(Number('18446744073709551615'));
  });
});
