import { describe, expect, it } from 'vitest';
import { csvCell, toCsv, type CsvValue } from './csv';

describe('csv cells', () => {
  it.each<{ name: string; value: CsvValue; expected: string }>([
    { name: 'plain text stays as it is', value: 'worker-7', expected: 'worker-7' },
    { name: 'null is empty', value: null, expected: '' },
    { name: 'undefined is empty', value: undefined, expected: '' },
    { name: 'a number is written as a number', value: 1042, expected: '1042' },
    { name: 'a negative number is not neutralised', value: -5, expected: '-5' },
    { name: 'a non-finite number is empty', value: Number.NaN, expected: '' },
    { name: 'a bigint', value: 18446744073709551615n, expected: '18446744073709551615' },
    { name: 'a comma is quoted', value: 'a,b', expected: '"a,b"' },
    { name: 'a quote is doubled and quoted', value: 'say "hi"', expected: '"say ""hi"""' },
    { name: 'a newline is quoted', value: 'line 1\nline 2', expected: '"line 1\nline 2"' },
    { name: 'a carriage return inside is quoted', value: 'a\r\nb', expected: '"a\r\nb"' },
    { name: '= starts a formula', value: '=HYPERLINK("http://x","y")', expected: '"\'=HYPERLINK(""http://x"",""y"")"' },
    { name: '+ starts a formula', value: '+1+2', expected: "'+1+2" },
    { name: '- starts a formula', value: '-2+3', expected: "'-2+3" },
    { name: '@ starts a formula', value: '@SUM(A1)', expected: "'@SUM(A1)" },
    { name: 'a leading tab is neutralised', value: '\t=1', expected: "'\t=1" },
    { name: 'a leading carriage return is neutralised and quoted', value: '\r=1', expected: '"\'\r=1"' },
    { name: 'a formula character later on is harmless', value: 'a=b', expected: 'a=b' },
    { name: 'the empty string', value: '', expected: '' },
  ])('$name', ({ value, expected }) => {
    expect(csvCell(value)).toBe(expected);
  });
});

describe('csv documents', () => {
  it('writes a header and CRLF-terminated rows', () => {
    expect(
      toCsv(
        ['lease', 'holder', 'gap_ms'],
        [
          ['redis/lock:a', 'worker,1', 250],
          ['pg/leases/job', null, null],
        ],
      ),
    ).toBe('lease,holder,gap_ms\r\nredis/lock:a,"worker,1",250\r\npg/leases/job,,\r\n');
  });

  it('writes only the header when there are no rows', () => {
    expect(toCsv(['a', 'b'], [])).toBe('a,b\r\n');
  });
});
