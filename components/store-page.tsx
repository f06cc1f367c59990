import type { ReactNode } from 'react';
import type { PageData } from '@/lib/queries/page-data';
import { StoreProblem } from './store-problem';

/**
 * The frame of a console page that shows what the store holds: its heading, then the
 * store's problem, the designed empty state, or the data — never a crash.
 */
export function StorePage<T>({
  title,
  subtitle,
  result,
  isEmpty,
  empty,
  children,
}: {
  title: string;
  subtitle: string;
  result: PageData<T>;
  isEmpty: (data: T) => boolean;
  empty: (data: T) => ReactNode;
  children: (data: T) => ReactNode;
}) {
  return (
    <>
      <h1>{title}</h1>
      <p className="subtitle">{subtitle}</p>
      {!result.ok ? <StoreProblem problem={result.problem} /> : isEmpty(result.data) ? empty(result.data) : children(result.data)}
    </>
  );
}
