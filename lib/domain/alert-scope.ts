// What a rule or a silence applies to (its scope), as written in config, the API and the CLI:
//   "all"               every lease and source
//   "source:<name>"     one source's leases (and the source itself)
//   "lease:<glob>"      lease ids matching a glob: `*` is any run of characters, nothing else is special
// Pure: parsed once, matched many times.
import type { AlertScope } from './alert-types';

const MAX_SCOPE_LENGTH = 1024;

/** The scope a text names, or an error message naming what was wrong. */
export function parseScope(text: unknown): { ok: true; scope: AlertScope } | { ok: false; error: string } {
  if (typeof text !== 'string') return { ok: false, error: 'expected a scope: "all", "source:<name>" or "lease:<glob>"' };
  if (text.length > MAX_SCOPE_LENGTH) return { ok: false, error: `expected a scope of at most ${MAX_SCOPE_LENGTH} characters` };
  if (text === 'all') return { ok: true, scope: { kind: 'all' } };
  if (text.startsWith('source:') && text.length > 'source:'.length) return { ok: true, scope: { kind: 'source', source: text.slice('source:'.length) } };
  if (text.startsWith('lease:') && text.length > 'lease:'.length) return { ok: true, scope: { kind: 'lease', pattern: text.slice('lease:'.length) } };
  return { ok: false, error: `expected a scope "all", "source:<name>" or "lease:<glob>", not "${text.slice(0, 60)}"` };
}

export function formatScope(scope: AlertScope): string {
  return scope.kind === 'all' ? 'all' : scope.kind === 'source' ? `source:${scope.source}` : `lease:${scope.pattern}`;
}

const globs = new Map<string, RegExp>();

/** A glob as a regular expression: `*` any run of characters, everything else literal. Cached (patterns are few). */
function globRegExp(pattern: string): RegExp {
  let re = globs.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`);
    if (globs.size > 1000) globs.clear();
    globs.set(pattern, re);
  }
  return re;
}

/** Whether the scope covers this subject: a lease (its source and id), or a source alone (leaseId null). */
export function scopeCovers(scope: AlertScope, source: string, leaseId: string | null): boolean {
  switch (scope.kind) {
    case 'all':
      return true;
    case 'source':
      return scope.source === source;
    case 'lease':
      // A source-wide alert (source_down) is about no lease: a lease glob does not cover it.
      return leaseId !== null && globRegExp(scope.pattern).test(leaseId);
  }
}
