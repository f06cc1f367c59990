// Every file of lib/ short enough to read through, and every function short enough to read
// at once (issue 15): at most about 300 lines a file and 80 a function, counted from a
// function's first line to its last, nested functions included. What is longer is named
// below with the reason it is, so that it is a decision and not a drift.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const LIB = path.resolve(import.meta.dirname, '../../lib');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

/** Longer on purpose: file or "file:function", and why. None today. */
const ALLOWED: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'generated' ? [] : sourceFiles(file);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [file] : [];
  });
}

/** Files over the limit and functions over theirs, as "file (N lines)" and "file:name (N lines)". */
export function oversized(files: { name: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { name, text } of files) {
    const lines = text.split('\n').length;
    if (lines > MAX_FILE_LINES && !ALLOWED[name]) found.push(`${name} (${lines} lines)`);
    const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isConstructorDeclaration(node)) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const length = last - first + 1;
        const parent = node.parent;
        const fn =
          (node as ts.FunctionDeclaration).name?.getText() ??
          (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) ? parent.name.getText() : `(line ${first + 1})`);
        if (length > MAX_FUNCTION_LINES && !ALLOWED[`${name}:${fn}`]) found.push(`${name}:${fn} (${length} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('lib/ reads in pieces', () => {
  it(`has no file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES}, but those named with a reason`, () => {
    const files = sourceFiles(LIB).map((file) => ({ name: path.relative(LIB, file), text: readFileSync(file, 'utf8') }));
    expect(oversized(files)).toEqual([]);
  });

  it('every exception still needs to be one (a shortened file leaves the list)', () => {
    const stale = Object.keys(ALLOWED).filter((entry) => {
      const [file, fn] = entry.split(':');
      const text = readFileSync(path.join(LIB, file!), 'utf8');
      if (!fn) return text.split('\n').length <= MAX_FILE_LINES;
      return oversized([{ name: `probe/${file}`, text }]).every((found) => !found.startsWith(`probe/${file}:${fn} `));
    });
    expect(stale).toEqual([]);
  });

  it('finds a long function and a long file (the checker itself)', () => {
    const body = Array.from({ length: 90 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(oversized([{ name: 'x.ts', text: `export function long() {\n${body}\n}\n` }])).toEqual(['x.ts:long (92 lines)']);
    expect(oversized([{ name: 'y.ts', text: Array.from({ length: 320 }, () => '// line').join('\n') }])).toEqual(['y.ts (320 lines)']);
  });
});
