// A queue of keys, each due at a time (ms on some monotonic clock), earliest first: a binary
// heap with lazy deletion. Setting a key again or deleting it leaves its old entry in the heap,
// skipped when it comes up; the heap is rebuilt when such entries outnumber the live ones, so a
// key re-set on every read costs O(log n) and memory stays within a few times the live keys.

type Entry<K> = { at: number; key: K };

export class DueQueue<K> {
  private readonly dueAt = new Map<K, number>();
  private heap: Entry<K>[] = [];

  /** Sets (or moves) a key's due time. */
  set(key: K, at: number): void {
    if (this.dueAt.get(key) === at) return;
    this.dueAt.set(key, at);
    push(this.heap, { at, key });
    if (this.heap.length > 64 && this.heap.length > 4 * this.dueAt.size) this.rebuild();
  }

  delete(key: K): void {
    this.dueAt.delete(key);
  }

  clear(): void {
    this.dueAt.clear();
    this.heap = [];
  }

  has(key: K): boolean {
    return this.dueAt.has(key);
  }

  get size(): number {
    return this.dueAt.size;
  }

  /** When the earliest key is due (Infinity when none is). */
  nextAt(): number {
    this.skipDead();
    return this.heap[0]?.at ?? Infinity;
  }

  /** Takes out the keys due at `now` or before, earliest first, at most `limit`. */
  takeDue(now: number, limit = Infinity): K[] {
    const due: K[] = [];
    while (due.length < limit) {
      this.skipDead();
      const top = this.heap[0];
      if (!top || top.at > now) break;
      pop(this.heap);
      this.dueAt.delete(top.key);
      due.push(top.key);
    }
    return due;
  }

  private skipDead() {
    while (this.heap.length > 0 && this.dueAt.get(this.heap[0]!.key) !== this.heap[0]!.at) pop(this.heap);
  }

  private rebuild() {
    this.heap = [];
    for (const [key, at] of this.dueAt) push(this.heap, { at, key });
  }
}

function push<K>(heap: Entry<K>[], entry: Entry<K>) {
  heap.push(entry);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]!.at <= heap[i]!.at) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

function pop<K>(heap: Entry<K>[]): Entry<K> | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length > 0 && last) {
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < heap.length && heap[l]!.at < heap[min]!.at) min = l;
      if (r < heap.length && heap[r]!.at < heap[min]!.at) min = r;
      if (min === i) break;
      [heap[min], heap[i]] = [heap[i]!, heap[min]!];
      i = min;
    }
  }
  return top;
}
