// What the benchmarks of bench/ share: timing helpers and the sections of bench/RESULTS.md.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../tests/support/services';

/** A progress line on stderr, stamped with the time of day (stdout carries the report). */
export const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The nearest-rank percentile (p in 0..100) of xs; NaN when there are none. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The short commit of a checkout, to say which code a figure is of ('?' when it is not one). */
export function gitHead(dir: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return '?';
  }
}

/**
 * Puts a benchmark's report into bench/RESULTS.md between its markers
 * (`<!-- <id>:start -->` … `<!-- <id>:end -->`), or, the first time, appends it as a new
 * section with its title and the command that measured it.
 */
export function writeResultsSection(section: { id: string; title: string; command: string; report: string }): void {
  const file = path.join(ROOT, 'bench', 'RESULTS.md');
  const text = readFileSync(file, 'utf8');
  const start = `<!-- ${section.id}:start -->`;
  const end = `<!-- ${section.id}:end -->`;
  const body = `${start}\n${section.report}\n${end}`;
  const at = text.indexOf(start);
  const until = text.indexOf(end);
  writeFileSync(
    file,
    at >= 0 && until > at
      ? text.slice(0, at) + body + text.slice(until + end.length)
      : `${text.trimEnd()}\n\n## ${section.title}\n\n\`${section.command}\`\n\n${body}\n`,
  );
  log('wrote bench/RESULTS.md');
}
