import type { ReactNode } from 'react';

/** A designed empty or error state: what is the case, and what to do about it. */
export function EmptyState({ title, children, tone = 'neutral' }: { title: string; children: ReactNode; tone?: 'neutral' | 'error' }) {
  return (
    <section className={`panel empty${tone === 'error' ? ' error-box' : ''}`} role={tone === 'error' ? 'alert' : 'status'}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}
