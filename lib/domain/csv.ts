// CSV (RFC 4180) for exports. Cells hold values read from backends (holders, keys), which
// are untrusted: a cell is quoted when it holds a quote, comma or line break, and a text cell
// that a spreadsheet would run as a formula (it starts with = + - @, or a tab or carriage
// return that some spreadsheets skip before looking) gets a leading apostrophe, so it opens
// as text (OWASP "CSV injection").

export type CsvValue = string | number | bigint | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: empty for null/undefined; numbers as they are; text neutralised and quoted when needed. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A whole document: the header row, then one row per item, each line ended by CRLF. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(csvCell).join(',')];
  for (const row of rows) lines.push(row.map(csvCell).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
