'use client';
// A list of fixed-height rows that renders only what is in view (plus a margin), so 10,000
// leases scroll as smoothly as 10. The rows scroll inside their own box, under a header that
// stays put; the box's height is fixed, so live updates never move the page. Rows may differ
// in height by kind (a phone's lease cards are taller than their source headings), but each
// row's height is known before it is drawn.
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';

export function VirtualRows<T>({
  rows,
  rowHeight,
  height,
  overscan = 8,
  render,
  label,
  header,
  rowCount,
  onNearEnd,
}: {
  rows: readonly T[];
  rowHeight: number | ((row: T) => number);
  /** CSS height of the scrolling box. */
  height: string;
  overscan?: number;
  render: (row: T, index: number, top: number) => ReactNode;
  label: string;
  header: ReactNode;
  /** For assistive technology: how many rows there are in all. */
  rowCount: number;
  /** Called when the rows drawn reach the last ones: time to read more (a paged list). */
  onNearEnd?: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 800 });
  const frame = useRef<number | null>(null);

  const measure = useCallback(() => {
    frame.current = null;
    const element = box.current;
    if (element) setView({ top: element.scrollTop, height: element.clientHeight });
  }, []);
  const onScroll = useCallback(() => {
    frame.current ??= requestAnimationFrame(measure);
  }, [measure]);
  useEffect(() => {
    measure();
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() => measure());
    observer.observe(element);
    return () => {
      observer.disconnect();
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    };
  }, [measure]);

  // Where each row starts: offsets[i] is the top of row i, offsets[rows.length] the total.
  const offsets = useMemo(() => {
    const tops = new Float64Array(rows.length + 1);
    for (let index = 0; index < rows.length; index++) tops[index + 1] = tops[index]! + (typeof rowHeight === 'number' ? rowHeight : rowHeight(rows[index]!));
    return tops;
  }, [rows, rowHeight]);
  const rowAt = (y: number) => {
    // The last row whose top is at or above y.
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (offsets[mid]! <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const first = Math.max(0, rowAt(view.top) - overscan);
  const last = Math.min(rows.length, rowAt(view.top + view.height) + 1 + overscan);
  const reachesEnd = last >= rows.length;
  useEffect(() => {
    if (reachesEnd) onNearEnd?.();
  }, [reachesEnd, rows.length, onNearEnd]);
  const visible: ReactNode[] = [];
  for (let index = first; index < last; index++) visible.push(render(rows[index]!, index, offsets[index]!));

  return (
    <div role="table" aria-label={label} aria-rowcount={rowCount + 1} className="vtable">
      {header}
      <div ref={box} className="vtable-body" style={{ height }} onScroll={onScroll} tabIndex={0} aria-label={`${label}: scroll for more`} role="rowgroup">
        <div style={{ height: offsets[rows.length], position: 'relative' }}>
          <div style={{ position: 'absolute', top: offsets[first], left: 0, right: 0 }}>{visible}</div>
        </div>
      </div>
    </div>
  );
}
