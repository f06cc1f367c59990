// docs/api.md shows what each route answers with JSON examples; lib/domain/schemas is what the
// routes are held to (lib/api/reply.ts) and what the browser checks. They must say the same:
// every example is parsed with its route's schema. An example may leave fields out with
// `"...": "..."` (an abridged object): then the fields it shows are checked, and nothing it
// does not know may appear; an object without it must be whole.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  alertViewSchema,
  apiErrorSchema,
  auditPageSchema,
  eventPageSchema,
  failoverPageSchema,
  forceChangedSchema,
  forceDoneSchema,
  forceDryRunSchema,
  healthSchema,
  leaseDetailSchema,
  leaseEventViewSchema,
  leaseListSchema,
  leaseViewSchema,
  renewalsSchema,
  sourcesSchema,
  sourceViewSchema,
  telemetryBodySchema,
} from '../../lib/domain/schemas';
import { streamHelloSchema } from '../../lib/live/messages';

const DOC = readFileSync(path.resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');

/** Each ```json block of the doc, with the heading it is under. */
function jsonExamples(markdown: string): { heading: string; text: string }[] {
  const found: { heading: string; text: string }[] = [];
  let heading = '';
  let block: string[] | null = null;
  for (const line of markdown.split('\n')) {
    if (block) {
      if (line.trim() === '```') {
        found.push({ heading, text: block.join('\n') });
        block = null;
      } else block.push(line);
    } else if (/^#{1,4} /.test(line)) heading = line.replace(/^#+ /, '');
    else if (line.trim() === '```json') block = [];
  }
  return found;
}

const ABRIDGED = '...';

/** Where `value` does not fit `schema` (empty when it does), abridged objects allowed. */
function misfits(schema: z.ZodType, value: unknown, at = '$'): string[] {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) {
    return value === null || value === undefined ? (schema.safeParse(value).success ? [] : [`${at}: ${String(value)} not allowed`]) : misfits(schema.unwrap() as z.ZodType, value, at);
  }
  if (schema instanceof z.ZodUnion) {
    const tries = (schema.options as z.ZodType[]).map((option) => misfits(option, value, at));
    return tries.some((t) => t.length === 0) ? [] : tries.flat();
  }
  if (schema instanceof z.ZodArray) {
    return Array.isArray(value) ? value.flatMap((item, i) => misfits(schema.element as z.ZodType, item, `${at}[${i}]`)) : [`${at}: not an array`];
  }
  if (schema instanceof z.ZodObject && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const shape = schema.shape as Record<string, z.ZodType>;
    const record = value as Record<string, unknown>;
    const abridged = ABRIDGED in record;
    const problems = Object.keys(record)
      .filter((key) => key !== ABRIDGED && !(key in shape))
      .map((key) => `${at}.${key}: not in the schema`);
    for (const [key, field] of Object.entries(shape)) {
      if (key in record) problems.push(...misfits(field, record[key], `${at}.${key}`));
      else if (!abridged && !(field instanceof z.ZodOptional)) problems.push(`${at}.${key}: missing`);
    }
    return problems;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${at}${issue.path.length ? '.' + issue.path.join('.') : ''}: ${issue.message}`);
}

/** The examples in the order the doc shows them, each with the schema of what it shows. */
const EXPECTED: [heading: string, schema: z.ZodType][] = [
  ['Lease', leaseViewSchema],
  ['Event', leaseEventViewSchema],
  ['Source', sourceViewSchema],
  ['Source', sourceViewSchema], // with its canary
  ['Errors', apiErrorSchema],
  ['GET /api/v1/leases', leaseListSchema],
  ['GET /api/v1/leases/{id}', leaseDetailSchema],
  ['GET /api/v1/leases/{id}/events', eventPageSchema],
  ['GET /api/v1/leases/{id}/renewals', renewalsSchema],
  ['POST /api/v1/leases/{id}/force-expire, POST /api/v1/leases/{id}/force-release', forceDoneSchema],
  ['POST /api/v1/leases/{id}/force-expire, POST /api/v1/leases/{id}/force-release', forceDryRunSchema],
  ['POST /api/v1/leases/{id}/force-expire, POST /api/v1/leases/{id}/force-release', forceChangedSchema],
  ['POST /api/v1/telemetry', telemetryBodySchema],
  ['GET /api/v1/failovers', failoverPageSchema],
  ['GET /api/v1/sources', sourcesSchema],
  ['GET /api/v1/audit', auditPageSchema],
  ['GET /api/health, GET /api/health/live', healthSchema],
];

describe('docs/api.md and lib/domain/schemas say the same', () => {
  const examples = jsonExamples(DOC);

  it('every JSON example of the doc has its schema here, in order', () => {
    expect(examples.map((e) => e.heading)).toEqual(EXPECTED.map(([heading]) => heading));
  });

  it.each(EXPECTED.map(([heading, schema], i) => [i + 1, heading, schema] as const))('example %i (%s) fits its schema', (n, _heading, schema) => {
    const example = examples[n - 1]!;
    expect(misfits(schema, JSON.parse(example.text))).toEqual([]);
  });

  it('the alert of docs/alerts.md\'s native message is an alert as the API shows it', () => {
    const native = jsonExamples(readFileSync(path.resolve(import.meta.dirname, '../../docs/alerts.md'), 'utf8')).find((e) => e.heading === 'Endpoints and formats');
    const message = z.object({ type: z.string(), at: z.string(), alert: z.unknown(), link: z.string().nullable() }).parse(JSON.parse(native!.text));
    expect(misfits(alertViewSchema, message.alert)).toEqual([]);
  });

  it('the stream\'s hello, as the doc shows it', () => {
    const hello = DOC.split('\n').find((line) => line.startsWith('data: {"position"'));
    expect(streamHelloSchema.safeParse(JSON.parse(hello!.slice('data: '.length))).success).toBe(true);
  });

  it('the checker itself: a missing field, an unknown one, a wrong type', () => {
    const lease = JSON.parse(examples[0]!.text) as Record<string, unknown>;
    const { fenced: _fenced, ...missing } = lease;
    expect(misfits(leaseViewSchema, missing)).toEqual(['$.fenced: missing']);
    expect(misfits(leaseViewSchema, { ...lease, pinned: true })).toEqual(['$.pinned: not in the schema']);
    expect(misfits(leaseViewSchema, { ...lease, token: 2 })).toHaveLength(1);
    expect(misfits(leaseViewSchema, { id: 'x', [ABRIDGED]: ABRIDGED })).toEqual([]);
  });
});
