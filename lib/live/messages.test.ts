// The live stream's messages as the browser reads them (lib/live/messages.ts): every message the
// server renders parses back to what was published; anything else is null, never a throw.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { LeaseEventView, LeaseView } from '../domain/types';
import type { BusMessage } from './bus';
import { MAX_STREAM_MESSAGE_CHARS, parseStreamHello, parseStreamMessage, type StreamMessage } from './messages';

const lease: LeaseView = {
  id: 'demo/pixly.leases/fleet/server-01',
  source: 'demo',
  backend: 'postgres',
  kind: 'lock',
  key: 'pixly.leases/fleet/server-01',
  state: 'held',
  holder: 'server-01:87b101b9',
  lastHolder: null,
  token: '2',
  fenced: true,
  ttlMs: 5827,
  remainingMs: 4151,
  acquiredAt: '2026-12-03T01:44:07.902Z',
  renewedAt: '2026-12-03T01:44:27.952Z',
  expiresAt: '2026-12-03T01:44:33.745Z',
  observedAt: '2026-12-03T01:44:27.952Z',
  stale: false,
  candidates: [{ holder: 'server-02:1b0dcc58', token: null }],
  transitions: 2,
  recentTransitions: null,
  lastIntervalMs: 2018,
  lastMarginMs: 3792,
  problem: null,
  detail: { heldOn: 2, instances: 3 },
};
const event: LeaseEventView = {
  id: '25',
  leaseId: 'demo/pixly.leases/fleet/server-10',
  type: 'acquired',
  at: '2026-12-03T01:44:23.919Z',
  holder: 'server-10:1b0dcc58',
  previousHolder: 'server-10:1eca43e6',
  token: '2',
  previousToken: '1',
  gapMs: 7151,
  detail: { cause: 'expired' },
};
const MESSAGES: BusMessage[] = [
  { type: 'lease', lease },
  { type: 'event', event },
  { type: 'source', source: { name: 'demo', backend: 'postgres', status: 'down', lastGoodReadAt: null, lastError: 'connection refused', lastPollMs: 12, downSince: '2026-12-03T01:44:23.919Z' } },
  { type: 'source', source: { name: 'demo', backend: 'postgres', status: 'up', lastGoodReadAt: '2026-12-03T01:44:23.919Z', lastError: null, lastPollMs: null } },
];
/** The payload of a message, as lib/live/stream.ts sends it in `data:`. */
const payload = (message: BusMessage) => (message.type === 'lease' ? message.lease : message.type === 'event' ? message.event : message.source);

describe('parseStreamMessage', () => {
  it('the schema is the bus message type', () => {
    expectTypeOf<StreamMessage>().toEqualTypeOf<BusMessage>();
  });

  it.each(MESSAGES.map((message) => ({ name: `${message.type} ${JSON.stringify(payload(message)).slice(0, 40)}`, message })))('$name parses, whole or as event + data', ({ message }) => {
    expect(parseStreamMessage(JSON.stringify(message))).toEqual(message);
    expect(parseStreamMessage(JSON.stringify(payload(message)), message.type)).toEqual(message);
  });

  const { id: _id, ...withoutId } = lease;
  const TWO_MB = 'x'.repeat(2 * 1024 * 1024);
  it.each([
    ['malformed JSON', '{"type":"lease","lease":{', undefined],
    ['empty', '', undefined],
    ['not an object', '"lease"', undefined],
    ['null', 'null', undefined],
    ['an unknown type', JSON.stringify({ type: 'hello', lease }), undefined],
    ['an unknown event name', JSON.stringify(lease), 'hello'],
    ['an event name from Object.prototype', JSON.stringify(lease), 'constructor'],
    ['a lease sent as an event', JSON.stringify(lease), 'event'],
    ['a lease missing its id', JSON.stringify({ type: 'lease', lease: withoutId }), undefined],
    ['a lease missing its id (event + data)', JSON.stringify(withoutId), 'lease'],
    ['a number where a string belongs', JSON.stringify({ type: 'lease', lease: { ...lease, holder: 42 } }), undefined],
    ['a string where a number belongs', JSON.stringify({ type: 'event', event: { ...event, gapMs: '7151' } }), undefined],
    ['a state there is none of', JSON.stringify({ type: 'lease', lease: { ...lease, state: 'sideways' } }), undefined],
    ['an event type there is none of', JSON.stringify(event).replace('"acquired"', '"stolen"'), 'event'],
    ['a source without its name', JSON.stringify({ backend: 'redis', status: 'up', lastGoodReadAt: null, lastError: null, lastPollMs: null }), 'source'],
    ['a 2 MB string field', JSON.stringify({ type: 'lease', lease: { ...lease, holder: TWO_MB } }), undefined],
    ['a 2 MB string field (event + data)', JSON.stringify({ ...event, holder: TWO_MB }), 'event'],
  ] as [string, string, string | undefined][])('%s is null', (_name, data, eventName) => {
    expect(parseStreamMessage(data, eventName)).toBeNull();
  });

  it('never throws, whatever it is given', () => {
    for (const data of [undefined, null, 42, {}, '\u0000', '{"__proto__":{"type":"lease"}}', '[]', '1e999'] as unknown as string[]) {
      expect(parseStreamMessage(data)).toBeNull();
      expect(parseStreamMessage(data, 'lease')).toBeNull();
    }
  });

  it('a message just under the bound parses; the bound is far above a real lease', () => {
    const big = { type: 'lease', lease: { ...lease, problem: 'p'.repeat(MAX_STREAM_MESSAGE_CHARS - 2_000) } };
    expect(JSON.stringify(big).length).toBeLessThanOrEqual(MAX_STREAM_MESSAGE_CHARS);
    expect(parseStreamMessage(JSON.stringify(big))).toEqual(big);
    expect(JSON.stringify({ type: 'lease', lease }).length * 100).toBeLessThan(MAX_STREAM_MESSAGE_CHARS);
  });

  it('drops fields the type does not have', () => {
    expect(parseStreamMessage(JSON.stringify({ ...event, extra: 1 }), 'event')).toEqual({ type: 'event', event });
  });
});

describe('parseStreamHello', () => {
  it('the hello of a connection, or null', () => {
    expect(parseStreamHello('{"position":"de3c9a76.523","gap":false}')).toEqual({ position: 'de3c9a76.523', gap: false });
    expect(parseStreamHello('{"position":"de3c9a76.523"}')).toBeNull();
    expect(parseStreamHello('{"position":1,"gap":true}')).toBeNull();
    expect(parseStreamHello('{')).toBeNull();
  });
});
