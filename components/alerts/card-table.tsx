// A labelled table like components/ui/data-table.tsx, each cell carrying its column's name:
// on a phone every row becomes a card of "name: value" lines (alerts.module.css .cards), so
// nothing scrolls sideways; wider, it is a table that scrolls inside its frame if it must.
import type { ReactNode } from 'react';
import styles from './alerts.module.css';

export type CardColumn<Row> = { header: string; cell: (row: Row) => ReactNode; className?: string };

export function CardTable<Row>({
  label,
  columns,
  rows,
  rowKey,
  rowProps,
  className,
}: {
  label: string;
  columns: CardColumn<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  rowProps?: (row: Row) => Record<`data-${string}`, string>;
  className?: string;
}) {
  return (
    <div className="table-scroll">
      <table className={`data ${styles.cards}${className ? ` ${className}` : ''}`} aria-label={label}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column.header}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowProps?.(row)}>
              {columns.map((column) => (
                <td key={column.header} data-label={column.header} className={column.className}>
                  <div className={styles.cell}>{column.cell(row)}</div>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
