// The imports between the folders of lib/, read from the source: for the rule that no two
// folders import each other, directly or round a longer loop (tests/unit/import-cycles.test.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'generated' ? [] : sourceFiles(file);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [file] : [];
  });
}

/**
 * lib's folder a file belongs to (lib/collector/x.ts → "collector"); a file at lib's root is a
 * node of its own (lib/errors.ts → "errors.ts"), so a loop through it counts too; an import of a
 * folder itself (`../config`, `@/lib/db`: its index.ts) belongs to that folder; null outside lib.
 */
export function folderOf(lib: string, file: string, isFolder: (file: string) => boolean = isDirectory): string | null {
  const parts = path.relative(lib, file).split(path.sep);
  if (parts[0]!.startsWith('..') || parts[0] === '') return null;
  if (parts.length > 1 || isFolder(file)) return parts[0]!;
  return `${parts[0]!.replace(/\.tsx?$/, '')}.ts`;
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/** For each folder of lib/, the other folders it imports, and through which file. */
export function folderImports(lib: string): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(lib)) {
    const from = folderOf(lib, file);
    if (!from) continue;
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const target = specifier!.startsWith('@/lib/') ? path.join(lib, specifier!.slice('@/lib/'.length)) : specifier!.startsWith('.') ? path.resolve(path.dirname(file), specifier!) : null;
      const to = target ? folderOf(lib, target) : null;
      if (!to || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      if (!graph.get(from)!.has(to)) graph.get(from)!.set(to, path.relative(lib, file));
    }
  }
  return graph;
}

/** Every loop of folders (each found once, from its first folder in name order), as "a → b → a". */
export function cycles(graph: Map<string, Map<string, string>>): string[] {
  const found = new Set<string>();
  const walk = (start: string, node: string, trail: string[]) => {
    for (const next of graph.get(node)?.keys() ?? []) {
      if (next === start) found.add([...trail, start].join(' → '));
      else if (!trail.includes(next) && next > start) walk(start, next, [...trail, next]);
    }
  };
  for (const start of [...graph.keys()].sort()) walk(start, start, [start]);
  return [...found];
}
