// Positions on the live bus: a subscriber resuming after a position gets exactly the
// messages after it, in order; a position it cannot honour says so instead of guessing.
import { describe, expect, it } from 'vitest';
import type { LeaseEventView } from '../domain/types';
import { createBus, type BusMessage } from './bus';

const event = (id: number): BusMessage => ({
  type: 'event',
  event: { id: String(id), leaseId: 'r/a', type: 'renewed', at: new Date(0).toISOString(), holder: 'w', previousHolder: null, token: '1', previousToken: null, gapMs: null, detail: null } as LeaseEventView,
});
const { position, publish, seqOf, subscribe } = createBus();
const ids = (messages: BusMessage[]) => messages.map((m) => (m.type === 'event' ? Number(m.event.id) : -1));

describe('the bus', () => {
  it('numbers every message; a position names the last one', () => {
    const before = seqOf(position())!;
    publish(event(1));
    publish(event(2));
    expect(seqOf(position())).toBe(before + 2);
  });

  it('resumes after a position: the messages after it, then live ones, none twice', () => {
    publish(event(10));
    const at = position();
    publish(event(11));
    publish(event(12));
    const seen: BusMessage[] = [];
    const seqs: number[] = [];
    const { unsubscribe, resumed } = subscribe((message, seq) => {
      seen.push(message);
      seqs.push(seq);
    }, seqOf(at));
    publish(event(13));
    unsubscribe();
    publish(event(14));
    expect(resumed).toBe(true);
    expect(ids(seen)).toEqual([11, 12, 13]);
    expect(seqs).toEqual([seqOf(at)! + 1, seqOf(at)! + 2, seqOf(at)! + 3]);
  });

  it('without a position, only live messages', () => {
    publish(event(20));
    const seen: BusMessage[] = [];
    const { unsubscribe, resumed } = subscribe((message) => seen.push(message));
    publish(event(21));
    unsubscribe();
    expect(resumed).toBe(false);
    expect(ids(seen)).toEqual([21]);
  });

  it('a position too old to replay in full is not resumed (no partial replay)', () => {
    const at = seqOf(position())!;
    for (let i = 0; i < 10_001; i++) publish(event(100 + i));
    const seen: BusMessage[] = [];
    const { unsubscribe, resumed } = subscribe((message) => seen.push(message), at);
    unsubscribe();
    expect(resumed).toBe(false);
    expect(seen).toHaveLength(0);
  });

  it('positions of another process, of the future, or malformed are not ours', () => {
    const [epoch, seq] = position().split('.');
    const other = epoch === 'aaaaaaaa' ? 'bbbbbbbb' : 'aaaaaaaa';
    expect(seqOf(`${other}.${seq}`)).toBeNull();
    expect(seqOf(`${epoch}.${Number(seq) + 1}`)).toBeNull();
    for (const bad of [null, '', 'x', `${epoch}`, `${epoch}.-1`, `${epoch}.1e3`, `${epoch}.1.2`, `${epoch}.99999999999999999999`]) expect(seqOf(bad)).toBeNull();
    expect(seqOf(`${epoch}.${seq}`)).toBe(Number(seq));
  });

  it("is one root's: another bus has its own epoch and sequence, and does not hear this one", () => {
    const other = createBus();
    const heard: BusMessage[] = [];
    const { unsubscribe } = other.subscribe((message) => heard.push(message));
    publish(event(30));
    expect(heard).toEqual([]);
    expect(other.seqOf(position())).toBeNull();
    expect(other.listeners()).toBe(1);
    unsubscribe();
    expect(other.listeners()).toBe(0);
  });
});
