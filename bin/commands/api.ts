// CLI commands that read the HTTP API of a running Leasehold (LEASEHOLD_URL, default
// http://127.0.0.1:3000; LEASEHOLD_TOKEN is sent as a bearer token when set). Human tables by
// default, the API's own JSON with --json.
import type { z } from 'zod';
import { formatDuration } from '../../lib/domain/duration';
import { terminalText } from '../../lib/domain/display';
import { apiErrorSchema, eventPageSchema, failoverPageSchema, leaseDetailSchema, leaseListSchema, sourcesSchema } from '../../lib/domain/schemas';
import type { LeaseEventView } from '../../lib/domain/types';
import { printTable } from './table';

export class ApiCallError extends Error {
  override name = 'ApiCallError';
}

type Flags = { json: boolean; source?: string; state?: string; q?: string; since?: string; types?: string; limit?: string; sort?: string; cursor?: string; all?: boolean };

export function apiBaseUrl(): string {
  return (process.env.LEASEHOLD_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`).replace(/\/+$/, '');
}

type RequestOptions = { query?: Record<string, string | undefined>; body?: unknown; timeoutMs?: number };

/** One call to the API with LEASEHOLD_TOKEN; its JSON answer, or ApiCallError with the server's own sentence. */
export async function apiRequest(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
  const url = new URL(`${apiBaseUrl()}${path}`);
  for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== '') url.searchParams.set(name, value);
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        Accept: 'application/json',
        ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...(process.env.LEASEHOLD_TOKEN ? { Authorization: `Bearer ${process.env.LEASEHOLD_TOKEN}` } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new ApiCallError(`cannot reach Leasehold at ${apiBaseUrl()} (${reason}); is it running? Point LEASEHOLD_URL at it.`);
  }
  if (response.status === 204) return null;
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const refusal = apiErrorSchema.pick({ message: true }).safeParse(body);
    throw new ApiCallError(refusal.success ? refusal.data.message : `the server answered ${response.status}`);
  }
  return body;
}

/**
 * apiRequest, its answer checked against the route's schema (lib/domain/schemas, the one the
 * route declares): `data` as parsed, `raw` as the server sent it (what --json prints). An answer
 * of another shape (a server of another version) is an ApiCallError naming the first difference.
 */
export async function apiAnswer<S extends z.ZodType>(schema: S, method: string, path: string, options: RequestOptions = {}): Promise<{ raw: unknown; data: z.output<S> }> {
  const raw = await apiRequest(method, path, options);
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { raw, data: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue ? `${issue.path.join('.') || 'the answer'}: ${issue.message}` : 'unreadable';
  throw new ApiCallError(`the answer to ${method} ${path} is not what this CLI expects (${terminalText(where)}); is the server of another version?`);
}

const get = <S extends z.ZodType>(schema: S, path: string, query: Record<string, string | undefined> = {}) => apiAnswer(schema, 'GET', path, { query });

const seconds = (ms: number | null) => (ms === null ? '—' : formatDuration(ms));
const leasePath = (id: string) => `/api/v1/leases/${encodeURIComponent(id)}`;

// The API's own shapes (docs/api.md, lib/domain/schemas): the CLI reads what the console reads.
type Event = LeaseEventView;
/** GET /api/v1/leases/{id} but its firstSeenAt, which the CLI does not show (nor need from the server). */
const leaseShown = leaseDetailSchema.omit({ firstSeenAt: true });

const eventRows = (events: Event[]) =>
  events.map((e) => [e.at, e.leaseId, e.type, e.previousHolder ?? '—', e.holder ?? '—', e.token ?? '—', e.gapMs === null ? '—' : seconds(e.gapMs)]);
const EVENT_HEADERS = ['AT', 'LEASE', 'EVENT', 'FROM', 'TO', 'TOKEN', 'GAP'];

type LeaseList = z.output<typeof leaseListSchema>;

/**
 * GET /api/v1/leases as the flags ask: one page, or with --all every page, followed by their
 * cursors, as one list (the API's shape, the last page's counts and sources). Progress goes to
 * standard error on a terminal.
 */
async function leasePages(flags: Flags): Promise<{ raw: unknown; data: LeaseList }> {
  if (flags.all && flags.cursor) throw new ApiCallError('--all starts from the first page: give it without --cursor');
  const query = { source: flags.source, state: flags.state, q: flags.q, sort: flags.sort, limit: flags.limit };
  const first = await get(leaseListSchema, '/api/v1/leases', { ...query, cursor: flags.cursor });
  if (!flags.all) return first;
  const leases = [...first.data.leases];
  let page = first.data;
  const cursors = new Set<string>();
  while (page.next) {
    if (cursors.has(page.next)) throw new ApiCallError(`the server sent the cursor ${page.next.slice(0, 40)}… twice; stopped after ${leases.length} leases`);
    cursors.add(page.next);
    if (process.stderr.isTTY) process.stderr.write(`\r${leases.length} of ${page.total} leases read…`);
    page = (await get(leaseListSchema, '/api/v1/leases', { ...query, cursor: page.next })).data;
    leases.push(...page.leases);
  }
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  // With another order than key, leases that move between pages may come twice (docs/api.md): once each here.
  const unique = [...new Map(leases.map((lease) => [lease.id, lease])).values()];
  const data = { ...page, leases: unique, truncated: false, next: null };
  return { raw: data, data };
}

export async function apiCommand(command: string, args: string[], flags: Flags): Promise<number> {
  const print = (data: unknown, human: () => void) => (flags.json ? process.stdout.write(`${JSON.stringify(data, null, 2)}\n`) : human());
  switch (command) {
    case 'leases': {
      const { raw, data } = await leasePages(flags);
      print(raw, () => {
        printTable(
          ['LEASE', 'KIND', 'STATE', 'HOLDER', 'TOKEN', 'REMAINING', 'QUEUED'],
          data.leases.map((l) => [
            l.id,
            l.kind,
            l.stale ? `${l.state} (stale since ${l.observedAt})` : l.problem ? `unknown: ${l.problem}` : l.state,
            l.holder ?? (l.lastHolder ? `(last: ${l.lastHolder})` : '—'),
            l.token ?? 'unfenced',
            seconds(l.remainingMs),
            String(l.candidates.length || '—'),
          ]),
        );
        if (data.next) console.log(`(${data.leases.length} of ${data.total} shown; the next page: --cursor ${data.next}, every page: --all, or narrow with --source, --state or --q)`);
        else if (data.truncated) console.log(`(${data.leases.length} of ${data.total} shown; narrow with --source, --state or --q)`);
      });
      return 0;
    }
    case 'lease': {
      const id = args[0];
      if (!id) throw new ApiCallError('usage: leasehold lease <id>');
      const { raw, data: lease } = await get(leaseShown, leasePath(id));
      print(raw, () => {
        const rows: [string, string][] = [
          ['lease', lease.id],
          ['state', lease.stale ? `${lease.state}, stale (its source cannot be read; last read ${lease.observedAt})` : lease.state],
          ['holder', lease.holder ?? (lease.lastHolder ? `none (last: ${lease.lastHolder})` : 'none')],
          ['token', lease.token ?? 'unfenced'],
          ['ttl / remaining', `${seconds(lease.ttlMs)} / ${seconds(lease.remainingMs)}`],
          ['acquired', lease.acquiredAt ?? '—'],
          ['renewed', lease.renewedAt ?? '—'],
          ['expires', lease.expiresAt ?? '—'],
          ['transitions', String(lease.transitions)],
        ];
        if (lease.candidates.length) rows.push(['queued', lease.candidates.map((c) => `${c.holder}${c.token ? ` (token ${c.token})` : ''}`).join(', ')]);
        for (const [name, value] of rows) console.log(`${name.padEnd(16)} ${terminalText(value)}`);
        console.log('');
        printTable(EVENT_HEADERS, eventRows(lease.events));
      });
      return 0;
    }
    case 'events': {
      const id = args[0];
      if (!id) throw new ApiCallError('usage: leasehold events <id> [--since 1h] [--types expired,taken_over]');
      const { raw, data: page } = await get(eventPageSchema, `${leasePath(id)}/events`, { since: flags.since, types: flags.types, limit: flags.limit });
      print(raw, () => printTable(EVENT_HEADERS, eventRows(page.events)));
      return 0;
    }
    case 'failovers': {
      const { raw, data: page } = await get(failoverPageSchema, '/api/v1/failovers', { since: flags.since, limit: flags.limit });
      print(raw, () =>
        printTable(
          ['AT', 'LEASE', 'CAUSE', 'FROM', 'TO', 'GAP'],
          page.failovers.map((f) => [f.at, f.leaseId, f.cause, f.previousHolder ?? '—', f.holder ?? '—', f.gapMs === null ? '—' : seconds(f.gapMs)]),
        ),
      );
      return 0;
    }
    case 'sources': {
      const { raw, data } = await get(sourcesSchema, '/api/v1/sources');
      print(raw, () =>
        printTable(
          ['SOURCE', 'BACKEND', 'STATUS', 'LEASES', 'LAST GOOD READ', 'POLL', 'LAST ERROR'],
          data.sources.map((s) => [s.name, s.backend, s.status, String(s.leases), s.lastGoodReadAt ?? '—', s.lastPollMs === null ? '—' : `${s.lastPollMs} ms`, s.lastError ?? '—']),
        ),
      );
      return 0;
    }
    default:
      throw new ApiCallError(`unknown command "${command}"`);
  }
}
