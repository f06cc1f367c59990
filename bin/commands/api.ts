// CLI commands that read the HTTP API of a running Leasehold (LEASEHOLD_URL, default
// http://127.0.0.1:3000; LEASEHOLD_TOKEN is sent as a bearer token when set). Human tables by
// default, the API's own JSON with --json.
import { formatDuration } from '../../lib/domain/duration';
import { terminalText } from '../../lib/domain/display';
import type { LeaseEventView, LeaseView } from '../../lib/domain/types';
import { printTable } from './table';

export class ApiCallError extends Error {
  override name = 'ApiCallError';
}

type Flags = { json: boolean; source?: string; state?: string; q?: string; since?: string; types?: string; limit?: string };

export function apiBaseUrl(): string {
  return (process.env.LEASEHOLD_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`).replace(/\/+$/, '');
}

const get = (path: string, query: Record<string, string | undefined> = {}) => apiRequest('GET', path, { query });

/** One call to the API with LEASEHOLD_TOKEN; its JSON answer, or ApiCallError with the server's own sentence. */
export async function apiRequest(method: string, path: string, options: { query?: Record<string, string | undefined>; body?: unknown; timeoutMs?: number } = {}): Promise<unknown> {
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
  const body = (await response.json().catch(() => null)) as { error?: string; message?: string } | null;
  if (!response.ok) throw new ApiCallError(body?.message ?? `the server answered ${response.status}`);
  return body;
}

const seconds = (ms: number | null) => (ms === null ? '—' : formatDuration(ms));
const leasePath = (id: string) => `/api/v1/leases/${encodeURIComponent(id)}`;

// The API's own shapes (docs/api.md): the CLI reads what the console reads.
type Lease = LeaseView;
type Event = LeaseEventView;

const eventRows = (events: Event[]) =>
  events.map((e) => [e.at, e.leaseId, e.type, e.previousHolder ?? '—', e.holder ?? '—', e.token ?? '—', e.gapMs === null ? '—' : seconds(e.gapMs)]);
const EVENT_HEADERS = ['AT', 'LEASE', 'EVENT', 'FROM', 'TO', 'TOKEN', 'GAP'];

export async function apiCommand(command: string, args: string[], flags: Flags): Promise<number> {
  const print = (data: unknown, human: () => void) => (flags.json ? process.stdout.write(`${JSON.stringify(data, null, 2)}\n`) : human());
  switch (command) {
    case 'leases': {
      const data = (await get('/api/v1/leases', { source: flags.source, state: flags.state, q: flags.q, limit: flags.limit })) as { leases: Lease[]; total: number; truncated: boolean };
      print(data, () => {
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
        if (data.truncated) console.log(`(${data.leases.length} of ${data.total} shown; narrow with --source, --state or --q)`);
      });
      return 0;
    }
    case 'lease': {
      const id = args[0];
      if (!id) throw new ApiCallError('usage: leasehold lease <id>');
      const lease = (await get(leasePath(id))) as Lease & { events: Event[] };
      print(lease, () => {
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
      const page = (await get(`${leasePath(id)}/events`, { since: flags.since, types: flags.types, limit: flags.limit })) as { events: Event[] };
      print(page, () => printTable(EVENT_HEADERS, eventRows(page.events)));
      return 0;
    }
    case 'failovers': {
      const page = (await get('/api/v1/failovers', { since: flags.since, limit: flags.limit })) as { failovers: (Event & { cause: string })[] };
      print(page, () =>
        printTable(
          ['AT', 'LEASE', 'CAUSE', 'FROM', 'TO', 'GAP'],
          page.failovers.map((f) => [f.at, f.leaseId, f.cause, f.previousHolder ?? '—', f.holder ?? '—', f.gapMs === null ? '—' : seconds(f.gapMs)]),
        ),
      );
      return 0;
    }
    case 'sources': {
      const data = (await get('/api/v1/sources')) as { sources: { name: string; backend: string; status: string; lastGoodReadAt: string | null; lastError: string | null; leases: number; lastPollMs: number | null }[] };
      print(data, () =>
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
