import type { ReactNode } from 'react';

export type Column<Row> = { header: string; cell: (row: Row) => ReactNode; mono?: boolean };

/** A plain, labelled table: one column definition per column, one row per item. */
export function DataTable<Row>({ label, columns, rows, rowKey }: { label: string; columns: Column<Row>[]; rows: Row[]; rowKey: (row: Row) => string }) {
  return (
    <div className="table-scroll">
      <table className="data" aria-label={label}>
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
            <tr key={rowKey(row)}>
              {columns.map((column) => (
                <td key={column.header} className={column.mono ? 'mono' : undefined}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
