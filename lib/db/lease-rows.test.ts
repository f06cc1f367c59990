import { describe, expect, it } from 'vitest';
import { json } from './lease-rows';

describe('json rows', () => {
  it('writes plain rows as they are, and a BigInt anywhere in them as text', () => {
    expect(json([{ id: 'a', token: '5', detail: null }])).toBe('[{"id":"a","token":"5","detail":null}]');
    expect(json([{ id: 'a', detail: { fence: 2n ** 70n, nested: [1n] } }])).toBe('[{"id":"a","detail":{"fence":"1180591620717411303424","nested":["1"]}}]');
  });

  it('still fails on what JSON cannot hold (a cycle)', () => {
    const row: Record<string, unknown> = { id: 'a' };
    row.self = row;
    expect(() => json([row])).toThrow(TypeError);
  });
});
