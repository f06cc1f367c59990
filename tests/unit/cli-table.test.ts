import { afterEach, expect, it, vi } from 'vitest';
import { printTable } from '../../bin/commands/table';

afterEach(() => vi.restoreAllMocks());

const printed = (headers: string[], rows: string[][]) => {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
  printTable(headers, rows);
  return lines;
};

it('shows the last column whole, so that an error message is read to its end', () => {
  const error = 'reading: etcd at 127.0.0.1:12399 refused the connection (is the server running, on that port?)';
  const lines = printed(['SOURCE', 'DETAIL'], [['etcd-main', error]]);
  expect(lines[1]).toBe(`etcd-main  ${error}`);
});

it('cuts a long cell of another column with an ellipsis, and keeps the columns aligned', () => {
  const lines = printed(['LEASE', 'STATE'], [['k'.repeat(100), 'held'], ['short', 'free']]);
  expect(lines[1]).toBe(`${'k'.repeat(59)}…  held`);
  expect(lines[2]).toBe(`${'short'.padEnd(60)}  free`);
});
