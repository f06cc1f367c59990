// One delivery attempt: POST the body, read what the receiver said, and turn it into an
// outcome the worker can store and act on. Never throws.
//
// Following the Standard Webhooks guidance on status codes: 2xx is delivered; a redirect is a
// failure, never followed (it would take the request, signature and all, somewhere the
// endpoint's owner did not name, and past the egress check of the first address); 410 Gone
// means the receiver wants no more; everything else is a failure worth another attempt,
// after the receiver's Retry-After when it gave one.
import { UNPRINTABLE_RUNS } from '../../domain/unprintable';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { systemClock, type Clock } from '../../time/clock';
import { EGRESS_REFUSED, EgressRefusedError } from './egress';

export type SendOutcome = 'delivered' | 'failed' | 'gone' | 'refused';

export type SendResult = {
  outcome: SendOutcome;
  /** The HTTP status, or null when there was no answer. */
  status: number | null;
  /** From the start of the attempt to the end of reading the answer (or the failure). */
  latencyMs: number;
  /** How long the receiver asked us to wait (Retry-After), at most an hour; null when it did not say. */
  retryAfterMs: number | null;
  /** One line: what went wrong, naming the host but never the URL's path or query (they may hold a token). */
  error: string | null;
  /** The start of the response body, control characters removed, for the delivery log. */
  responseExcerpt: string | null;
};

export type SendInput = {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** An egress agent (createEgressAgent): the only way out. */
  dispatcher: Dispatcher;
  /** For the whole attempt: connecting, sending, and reading the answer. */
  timeoutMs?: number;
  /** What the latency and Retry-After's date are read on (default: the system clock). */
  clock?: Clock;
};

export const DEFAULT_SEND_TIMEOUT_MS = 10_000;
const EXCERPT_BYTES = 4096;
const MAX_RETRY_AFTER_MS = 3_600_000;
const MAX_ERROR_CHARS = 400;

/**
 * Retry-After in milliseconds, from either form RFC 9110 allows: delay-seconds ("120") or an
 * HTTP date (in the past means now). Capped at an hour: a receiver cannot park a delivery
 * for days. Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined | null, nowMs = systemClock.wall()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  // A date has letters (a day or month name); Date.parse would take "12" or "1.5" as dates too.
  if (!/[A-Za-z]/.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

/** One printable line of at most `max` characters: unprintable characters (lib/domain/unprintable.ts) would break or disguise a table's cell or a log line. */
export function printable(text: string, max: number): string {
  const line = text.replace(UNPRINTABLE_RUNS, ' ').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      // Leaving the loop destroys the stream: the rest is never read.
      if (size >= EXCERPT_BYTES) break;
    }
  } catch {
    // A body cut short (reset, timeout) still has its start to show.
  } finally {
    if (!body.destroyed) body.destroy();
  }
  const text = new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES));
  const line = printable(text, EXCERPT_BYTES);
  return line === '' ? null : line;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The error of a request that got no answer, as one line. */
function failureLine(error: unknown, host: string): string {
  const err = error as { message?: unknown; code?: unknown; cause?: { message?: unknown } } | null;
  const message = typeof err?.message === 'string' && err.message !== '' ? err.message : String(error);
  const cause = typeof err?.cause?.message === 'string' && !message.includes(err.cause.message) ? ` (${err.cause.message})` : '';
  return printable(`${host}: ${message}${cause}`, MAX_ERROR_CHARS);
}

/** The URL without its user name and password, and those as a Basic Authorization header (undici takes none from the URL). */
function splitCredentials(url: URL): { url: string; authorization: string | null } {
  if (url.username === '' && url.password === '') return { url: url.toString(), authorization: null };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  const bare = new URL(url.toString());
  bare.username = '';
  bare.password = '';
  return { url: bare.toString(), authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
}

/** POSTs one webhook and says how it went. */
export async function sendWebhook(input: SendInput): Promise<SendResult> {
  const clock = input.clock ?? systemClock;
  const started = clock.mono();
  const timeoutMs = input.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const result = (fields: Partial<SendResult> & Pick<SendResult, 'outcome'>): SendResult => ({
    outcome: fields.outcome,
    status: fields.status ?? null,
    latencyMs: Math.round(clock.mono() - started),
    retryAfterMs: fields.retryAfterMs ?? null,
    error: fields.error ?? null,
    responseExcerpt: fields.responseExcerpt ?? null,
  });

  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return result({ outcome: 'refused', error: 'refused: the endpoint URL is not a valid URL' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return result({ outcome: 'refused', error: `refused: the endpoint URL's scheme is ${printable(url.protocol, 20)}, not https or http` });
  }
  const host = url.host;
  const target = splitCredentials(url);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Leasehold-Webhooks', ...input.headers };
  if (target.authorization && !Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) headers.authorization = target.authorization;

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    // undici's request follows no redirects (that takes the redirect interceptor, not used here).
    const response = await request(target.url, {
      method: 'POST',
      headers,
      body: input.body,
      dispatcher: input.dispatcher,
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const status = response.statusCode;
    const responseExcerpt = await readExcerpt(response.body);
    if (status >= 200 && status < 300) return result({ outcome: 'delivered', status, responseExcerpt });
    const retryAfterMs = parseRetryAfter(header(response.headers, 'retry-after'), clock.wall());
    if (status === 410) {
      return result({ outcome: 'gone', status, retryAfterMs, responseExcerpt, error: `${host} answered 410 Gone: it wants no more deliveries` });
    }
    if (status >= 300 && status < 400) {
      const location = header(response.headers, 'location');
      const where = location ? `to ${printable(location, 200)}` : 'without a Location';
      return result({
        outcome: 'failed',
        status,
        retryAfterMs,
        responseExcerpt,
        error: `${host} answered ${status}, a redirect ${where}; redirects are not followed: set the endpoint's URL to where it should go`,
      });
    }
    return result({ outcome: 'failed', status, retryAfterMs, responseExcerpt, error: `${host} answered HTTP ${status}` });
  } catch (error) {
    if (error instanceof EgressRefusedError || (error as { code?: unknown } | null)?.code === EGRESS_REFUSED) {
      return result({ outcome: 'refused', error: printable((error as Error).message, MAX_ERROR_CHARS) });
    }
    if (controller.signal.aborted) return result({ outcome: 'failed', error: `${host}: no answer within ${timeoutMs} ms` });
    return result({ outcome: 'failed', error: failureLine(error, host) });
  } finally {
    clearTimeout(timer);
  }
}
