// A backend kind is one folder (lib/sources/<kind>/) and one line of the registration list
// (lib/sources/backends.ts): the rest of the code takes every kind alike. This test counts the
// files of lib/, app/, components/ and bin/ that still name a registered kind as a quoted
// string, and fails above three (issue 25). The store's own kind ('postgres' | 'pglite': where
// Leasehold keeps its data) and URL schemes are other things of the same name, and comments
// are not code: lines of those are not counted.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKEND_DESCRIPTORS } from '../../lib/sources/backends';

const ROOT = path.resolve(__dirname, '../..');
const SCANNED = ['lib', 'app', 'components', 'bin'];
/** Where a kind may be named: its own folder, the lease library and the demo (which run one of each), and the list. */
const OWN = [/^lib\/sources\/[^/]+\//, /^lib\/lease\//, /^lib\/demo\//, /^lib\/sources\/backends\.ts$/, /^lib\/generated\//];
const MAX_FILES = 3;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'node_modules' ? [] : files(file);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [file] : [];
  });
}

/** The lines of `text` that name one of `kinds` as a quoted string, leaving out comments, the store's kind and URL schemes. */
function namingLines(text: string, kinds: readonly string[]): string[] {
  const quoted = new RegExp(`(['"\`])(${kinds.map((kind) => kind.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})\\1`);
  return text.split('\n').filter((line) => {
    const code = line.trim();
    if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*')) return false;
    if (!quoted.test(code)) return false;
    const storeKind = /\bkind\b/.test(code) || /'pglite'/.test(code);
    const urlScheme = /'postgresql'|'rediss'|'https'/.test(code);
    return !storeKind && !urlScheme;
  });
}

describe('backend kinds are named in their own folders', () => {
  const kinds = BACKEND_DESCRIPTORS.map((descriptor) => descriptor.kind);

  it('the counter sees a kind named in code and passes over comments, the store kind and URL schemes', () => {
    const kindsHere = ['postgres', 'redis', 'etcd'];
    expect(namingLines(`if (source.backend === 'redis') return 1;`, kindsHere)).toHaveLength(1);
    expect(namingLines(`const TITLE = { x: "etcd" };`, kindsHere)).toHaveLength(1);
    expect(namingLines(`// a 'redis' source`, kindsHere)).toHaveLength(0);
    expect(namingLines(`if (config.store.kind === 'postgres') open();`, kindsHere)).toHaveLength(0);
    expect(namingLines(`urlWithScheme(['postgres', 'postgresql'], 'a URL')`, kindsHere)).toHaveLength(0);
  });

  it(`at most ${MAX_FILES} files outside lib/sources/<kind>/, lib/lease, lib/demo and the list name a kind`, () => {
    const naming = SCANNED.flatMap((dir) => files(path.join(ROOT, dir)))
      .map((file) => path.relative(ROOT, file).split(path.sep).join('/'))
      .filter((file) => !OWN.some((own) => own.test(file)))
      .map((file) => ({ file, lines: namingLines(readFileSync(path.join(ROOT, file), 'utf8'), kinds) }))
      .filter(({ lines }) => lines.length > 0);
    expect(naming.length, naming.map(({ file, lines }) => `${file}: ${lines.map((line) => line.trim()).join(' | ')}`).join('\n')).toBeLessThanOrEqual(MAX_FILES);
  });
});
