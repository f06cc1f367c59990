import { describe, expect, it } from 'vitest';
import { DueQueue } from './due-queue';

describe('DueQueue', () => {
  it('gives the due keys earliest first, each once, and honours moves and deletes', () => {
    const q = new DueQueue<string>();
    q.set('c', 30);
    q.set('a', 10);
    q.set('b', 20);
    q.set('c', 5); // moved earlier
    q.set('b', 50); // moved later
    q.set('d', 15);
    q.delete('d');
    expect(q.nextAt()).toBe(5);
    expect(q.takeDue(25)).toEqual(['c', 'a']);
    expect(q.takeDue(25)).toEqual([]);
    expect(q.size).toBe(1);
    expect(q.takeDue(100)).toEqual(['b']);
    expect(q.nextAt()).toBe(Infinity);
  });

  it('takes at most the limit, leaving the rest due', () => {
    const q = new DueQueue<number>();
    for (let i = 0; i < 10; i++) q.set(i, i);
    expect(q.takeDue(100, 3)).toEqual([0, 1, 2]);
    expect(q.takeDue(100)).toEqual([3, 4, 5, 6, 7, 8, 9]);
  });

  it('keeps its heap within a few times the live keys when keys are re-set again and again', () => {
    const q = new DueQueue<number>();
    for (let round = 0; round < 1_000; round++) for (let key = 0; key < 100; key++) q.set(key, round * 1_000 + key);
    expect(q.size).toBe(100);
    expect((q as unknown as { heap: unknown[] }).heap.length).toBeLessThanOrEqual(400);
    expect(q.takeDue(Infinity)).toHaveLength(100);
  });
});
