import type { ReactNode } from 'react';

export type Column<Row> = { header: string; cell: (row: Row) => ReactNode; mono?: boolean; className?: string };

/**
 * A plain, labelled table: one column definition per column, one row per item. Each cell
 * carries its column's name (data-label), so a stylesheet can turn rows into cards of
 * "name: value" lines on a phone (components/alerts/card-table.tsx); `cellClassName` wraps
 * each cell's content for that.
 */
export type DataTableProps<Row> = {
  label: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  rowProps?: (row: Row) => Record<`data-${string}`, string>;
  className?: string;
  cellClassName?: string;
};

export function DataTable<Row>({ label, columns, rows, rowKey, rowProps, className, cellClassName }: DataTableProps<Row>) {
  return (
    <div className="table-scroll">
      <table className={className ? `data ${className}` : 'data'} aria-label={label}>
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
                <td key={column.header} data-label={column.header} className={[column.mono ? 'mono' : '', column.className ?? ''].join(' ').trim() || undefined}>
                  {cellClassName ? <div className={cellClassName}>{column.cell(row)}</div> : column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
