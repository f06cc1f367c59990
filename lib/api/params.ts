// Query parameters of the read API, validated at the edge: a bad one is a 400 that names it.
import { z } from 'zod';
import { EVENT_TYPES, LEASE_STATES, type EventType } from '../domain/types';

export class InvalidParameterError extends Error {
  constructor(readonly parameter: string, expected: string, found: string | null) {
    super(`The query parameter "${parameter}" must be ${expected}${found === null ? '' : `, not "${found.length > 60 ? `${found.slice(0, 57)}...` : found}"`}.`);
    this.name = 'InvalidParameterError';
  }
}

export class NotFoundError extends Error {
  constructor(what: string) {
    super(what);
    this.name = 'NotFoundError';
  }
}

const DURATION = /^(\d{1,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `since`: an ISO timestamp, or a duration back from now (30s, 15m, 6h, 7d). */
export function parseSince(params: URLSearchParams, now = Date.now()): Date | undefined {
  const raw = params.get('since');
  if (raw === null || raw === '') return undefined;
  const duration = DURATION.exec(raw);
  if (duration) return new Date(now - Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS]);
  const date = new Date(raw);
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(raw)) {
    throw new InvalidParameterError('since', 'an ISO time (2026-12-02T06:00:00Z) or a duration such as 15m, 6h or 7d', raw);
  }
  return date;
}

export function parseLimit(params: URLSearchParams, fallback: number, max: number): number {
  const raw = params.get('limit');
  if (raw === null || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new InvalidParameterError('limit', `a whole number from 1 to ${max}`, raw);
  return value;
}

/** An opaque cursor from a previous page (`next`). */
export function parseCursor(params: URLSearchParams): bigint | undefined {
  const raw = params.get('cursor');
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,19}$/.test(raw)) throw new InvalidParameterError('cursor', 'the "next" value of a previous page', raw);
  return BigInt(raw);
}

export function parseTypes(params: URLSearchParams): EventType[] | undefined {
  const raw = params.get('types');
  if (raw === null || raw === '') return undefined;
  const types = raw.split(',').map((t) => t.trim());
  const bad = types.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (bad !== undefined) throw new InvalidParameterError('types', `a comma-separated list of ${EVENT_TYPES.join(', ')}`, bad);
  return types as EventType[];
}

const stateSchema = z.enum(LEASE_STATES);

export function parseLeaseFilter(params: URLSearchParams) {
  const state = params.get('state') || undefined;
  if (state !== undefined && !stateSchema.safeParse(state).success) throw new InvalidParameterError('state', `one of ${LEASE_STATES.join(', ')}`, state);
  const q = params.get('q') || undefined;
  if (q !== undefined && q.length > 200) throw new InvalidParameterError('q', 'at most 200 characters', `${q.slice(0, 20)}...`);
  const source = params.get('source') || undefined;
  if (source !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(source)) throw new InvalidParameterError('source', 'a source name', source);
  return { state: state as z.infer<typeof stateSchema> | undefined, q, source, limit: parseLimit(params, 10_000, 100_000) };
}
