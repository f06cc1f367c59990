'use client';
// A list of fixed-height rows that renders only what is in view (plus a margin), so 10,000
// leases scroll as smoothly as 10. The rows scroll inside their own box, under a header that
// stays put; the box's height is fixed, so live updates never move the page.
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';

export function VirtualRows<T>({
  rows,
  rowHeight,
  height,
  overscan = 8,
  render,
  label,
  header,
  rowCount,
}: {
  rows: readonly T[];
  rowHeight: number;
  /** CSS height of the scrolling box. */
  height: string;
  overscan?: number;
  render: (row: T, index: number) => ReactNode;
  label: string;
  header: ReactNode;
  /** For assistive technology: how many rows there are in all. */
  rowCount: number;
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

  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const last = Math.min(rows.length, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  const visible: ReactNode[] = [];
  for (let index = first; index < last; index++) visible.push(render(rows[index]!, index));

  return (
    <div role="table" aria-label={label} aria-rowcount={rowCount + 1} className="vtable">
      {header}
      <div ref={box} className="vtable-body" style={{ height }} onScroll={onScroll} tabIndex={0} aria-label={`${label}: scroll for more`} role="rowgroup">
        <div style={{ height: rows.length * rowHeight, position: 'relative' }}>
          <div style={{ position: 'absolute', top: first * rowHeight, left: 0, right: 0 }}>{visible}</div>
        </div>
      </div>
    </div>
  );
}
