// What a stream request asks for (lib/live/stream.ts streamOptions): where it resumes, and
// which messages it wants, as GET /api/v1/stream reads ?after=, Last-Event-ID, ?source= and ?lease=.
import { describe, expect, it } from 'vitest';
import type { LeaseEventView, LeaseView } from '../domain/types';
import type { BusMessage } from './bus';
import { messageLease, messageSource, streamOptions } from './stream';

const lease = (id: string): BusMessage => ({ type: 'lease', lease: { id, source: id.split('/')[0]! } as LeaseView });
const event = (leaseId: string): BusMessage => ({ type: 'event', event: { id: '1', leaseId } as LeaseEventView });
const source = (name: string): BusMessage => ({ type: 'source', source: { name, backend: 'redis', status: 'up', lastGoodReadAt: null, lastError: null, lastPollMs: null } });
const none = { after: null, source: null, lease: null };

describe('streamOptions', () => {
  it('resumes after Last-Event-ID, else ?after=; an empty one is still asked for (and answered with gap: true)', () => {
    expect(streamOptions(null, none).after).toBeNull();
    expect(streamOptions(null, { ...none, after: 'ab12cd34.5' }).after).toBe('ab12cd34.5');
    expect(streamOptions('ab12cd34.9', { ...none, after: 'ab12cd34.5' }).after).toBe('ab12cd34.9');
    expect(streamOptions('', { ...none, after: 'ab12cd34.5' }).after).toBe('');
    expect(streamOptions(null, { ...none, after: '' }).after).toBe('');
  });

  it('without filters, every message', () => {
    const { wanted } = streamOptions(null, { ...none, source: '', lease: '' });
    for (const message of [lease('a/x'), event('a/x'), source('a')]) expect(wanted(message)).toBe(true);
  });

  it('?source=: the messages about that source, its leases and their events', () => {
    const { wanted } = streamOptions(null, { ...none, source: 'a' });
    expect([lease('a/x'), event('a/x/y'), source('a'), lease('b/x'), event('b/a'), source('b'), event('ab/x')].map(wanted)).toEqual([true, true, true, false, false, false, false]);
  });

  it('?lease=: the messages about that lease id (no source messages)', () => {
    const { wanted } = streamOptions(null, { ...none, lease: 'a/x' });
    expect([lease('a/x'), event('a/x'), source('a'), lease('a/x/y'), event('a/xy')].map(wanted)).toEqual([true, true, false, false, false]);
    const both = streamOptions(null, { ...none, source: 'b', lease: 'a/x' }).wanted;
    expect([lease('a/x'), event('a/x')].map(both)).toEqual([false, false]);
  });

  it('?types=: only those kinds of message; an unknown word matches nothing', () => {
    const sourcesOnly = streamOptions(null, { ...none, types: 'source' }).wanted;
    expect([lease('a/x'), event('a/x'), source('a')].map(sourcesOnly)).toEqual([false, false, true]);
    const two = streamOptions(null, { ...none, types: 'lease, event', source: 'a' }).wanted;
    expect([lease('a/x'), event('a/x'), source('a'), lease('b/x')].map(two)).toEqual([true, true, false, false]);
    expect([lease('a/x'), source('a')].map(streamOptions(null, { ...none, types: 'nothing' }).wanted)).toEqual([false, false]);
    expect([lease('a/x'), source('a')].map(streamOptions(null, { ...none, types: '' }).wanted)).toEqual([true, true]);
  });

  it('the source and lease of a message', () => {
    expect([lease('a/x'), event('a/x/y'), event('nosource'), source('s')].map(messageSource)).toEqual(['a', 'a', 'nosource', 's']);
    expect([lease('a/x'), event('a/x/y'), source('s')].map(messageLease)).toEqual(['a/x', 'a/x/y', null]);
  });
});
