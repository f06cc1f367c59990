// Plain aligned tables for people at a terminal; --json is for machines.
import { terminalText } from '../../lib/domain/display';

/**
 * Every cell is made safe for a terminal: no control or bidi character from a server reaches it.
 * Columns are at most 60 characters wide, a longer cell cut with "…", except the last, which is
 * shown whole (an error message there is read to its end; the terminal wraps it).
 */
export function printTable(headers: string[], unsafeRows: string[][]) {
  const rows = unsafeRows.map((row) => row.map((cell) => terminalText(cell ?? '')));
  const widths = headers.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length))));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        if (i === cells.length - 1) return cell;
        const text = cell.length > widths[i]! ? `${cell.slice(0, widths[i]! - 1)}…` : cell;
        return text.padEnd(widths[i]!);
      })
      .join('  ');
  console.log(line(headers));
  for (const row of rows) console.log(line(row));
  if (rows.length === 0) console.log('(none)');
}
