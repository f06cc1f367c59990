// Config problems in words: one sentence per zod issue, naming the field (and the source a
// person is looking at), what was expected and what was found, with no secret in it; the
// fields a misspelling is matched against are read from the schema itself.
import type { z } from 'zod';
import { redactUrlPassword } from '../redact';
import { fileSchema } from './schema';

export type PathKey = string | number;
type Issue = z.core.$ZodIssue;

/** One sentence for one problem: "<field>: expected <what>, found <what was there>". */
export function formatIssue(issue: Issue, root: unknown, fieldPrefix = ''): string {
  const at = issue.path as PathKey[];
  const field = fieldPrefix + formatPath(at, root);
  const found = valueAt(root, at);
  const foundText = describeValue(found, at);

  if (issue.message.startsWith('expected ')) {
    return issue.message.includes(', found ') ? `${field}: ${issue.message}` : `${field}: ${issue.message}, found ${foundText}`;
  }
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeys(root, at);
      return issue.keys
        .map((key) => {
          const suggestion = closest(key, known);
          const where = at.length > 0 ? ` in ${formatPath(at, root)}` : '';
          return `${fieldPrefix}${formatPath([...at, key], root)}: unknown field "${key}"${where}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`;
        })
        .join('\n  - ');
    }
    case 'invalid_type':
      return found === undefined
        ? `${field}: is required: expected ${typeName(issue.expected)}, found nothing`
        : `${field}: expected ${typeName(issue.expected)}, found ${foundText}`;
    case 'invalid_value':
      return `${field}: expected ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`}, found ${foundText}`;
    case 'invalid_union':
      if ('discriminator' in issue && issue.discriminator) {
        const options = (issue as { options?: unknown[] }).options ?? [];
        return `${field}: expected one of ${options.map((o) => JSON.stringify(o)).join(', ')}, found ${foundText}`;
      }
      return `${field}: expected one of the allowed shapes, found ${foundText}`;
    case 'too_small':
      return `${field}: expected ${boundText('at least', issue.origin, issue.minimum)}, found ${foundText}`;
    case 'too_big':
      return `${field}: expected ${boundText('at most', issue.origin, issue.maximum)}, found ${foundText}`;
    case 'invalid_format':
      return `${field}: expected a valid ${issue.format}, found ${foundText}`;
    default:
      return `${field}: ${issue.message}, found ${foundText}`;
  }
}

function boundText(relation: string, origin: string, bound: number | bigint): string {
  if (origin === 'array' || origin === 'set') return `${relation} ${bound} ${bound === 1 ? 'entry' : 'entries'}`;
  if (origin === 'string') return `${relation} ${bound} characters`;
  return `a number ${relation} ${bound}`;
}

function typeName(expected: string): string {
  const names: Record<string, string> = {
    string: 'text',
    number: 'a number',
    int: 'a whole number',
    boolean: 'true or false',
    array: 'a list',
    object: 'an object',
  };
  return names[expected] ?? expected;
}

export function formatPath(at: PathKey[], root: unknown): string {
  if (at.length === 0) return '(top level)';
  let text = '';
  let node: unknown = root;
  for (const key of at) {
    text += typeof key === 'number' ? `[${key}]` : text === '' ? key : `.${key}`;
    node = node !== null && typeof node === 'object' ? (node as Record<PathKey, unknown>)[key] : undefined;
    // Name the source a person is looking at: sources[2] ("redis-eu").urls[0]
    if (typeof key === 'number' && text.startsWith('sources[') && text.indexOf(']') === text.length - 1) {
      const name = node !== null && typeof node === 'object' ? (node as { name?: unknown }).name : undefined;
      if (typeof name === 'string' && name.length > 0 && name.length <= 63) text += ` ("${name}")`;
    }
  }
  return text;
}

function valueAt(root: unknown, at: PathKey[]): unknown {
  let node = root;
  for (const key of at) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PathKey, unknown>)[key];
  }
  return node;
}

/** The fields the file's schema allows at a path (for "did you mean"), read from the schema itself. */
function knownKeys(root: unknown, at: PathKey[]): string[] {
  let schema: z.core.$ZodType | undefined = fileSchema;
  let value = root;
  for (const key of at) {
    const def: SchemaDef | undefined = schema && (concrete(schema, value)?._zod.def as SchemaDef | undefined);
    schema = def?.type === 'object' ? def.shape?.[key] : def?.type === 'array' ? def.element : undefined;
    if (!schema) return [];
    value = value !== null && typeof value === 'object' ? (value as Record<PathKey, unknown>)[key] : undefined;
  }
  const def = concrete(schema, value)?._zod.def as SchemaDef | undefined;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

type SchemaDef = {
  type: string;
  shape?: Record<PathKey, z.core.$ZodType>;
  element?: z.core.$ZodType;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  options?: z.core.$ZodType[];
  discriminator?: string;
  values?: unknown[];
};

/** The schema that applies to a value: defaults and optionals unwrapped, a union's option picked by its discriminator. */
function concrete(schema: z.core.$ZodType, value: unknown): z.core.$ZodType | undefined {
  for (let depth = 0; depth < 20; depth++) {
    const def = schema._zod.def as SchemaDef;
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner) {
      schema = inner;
      continue;
    }
    if (def.type !== 'union') return schema;
    const tag = def.discriminator && value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[def.discriminator] : undefined;
    const option = def.options?.find((o) => ((o._zod.def as SchemaDef).shape?.[def.discriminator ?? '']?._zod.def as SchemaDef | undefined)?.values?.includes(tag));
    if (!option) return undefined;
    schema = option;
  }
  return undefined;
}

/** The known key a typo most likely meant, by edit distance. */
function closest(key: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** How a found value is shown: short, and with any password in a URL replaced. */
export function describeValue(value: unknown, at: PathKey[] = []): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  // Whatever sits in a field named like a secret is described, never shown: a number too.
  const secretField = at.some((key) => typeof key === 'string' && /password|secret|token/i.test(key));
  if (secretField) {
    if (typeof value === 'string') return `a value of ${value.length} characters (not shown)`;
    if (typeof value === 'number' || typeof value === 'bigint') return 'a number (not shown)';
    if (typeof value === 'boolean') return 'true or false (not shown)';
    if (Array.isArray(value)) return `a list (not shown)`;
    return `${typeof value === 'object' ? 'an object' : typeof value} (not shown)`;
  }
  if (typeof value === 'string') {
    const shown = redactUrlPassword(value);
    return JSON.stringify(shown.length > 80 ? `${shown.slice(0, 77)}...` : shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : `a list of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return typeof value;
}
