// The config file's and the environment's schemas (zod). Messages that begin with "expected"
// are used as they are by issues.ts.
import { z } from 'zod';
import type { StoreConfig } from '../db/store';
import { pollMs, urlWithScheme } from '../sources/config-parts';
import { sourceSchema, type SourceConfig } from '../sources/backends';
import { parseAddressRange } from '../net/address-range';
import { parseAllowedHosts } from '../net/host-pattern';
import { alertsSchema } from './alerts-schema';
import { authSchema } from './auth-schema';

export const DEFAULT_CONFIG_FILE = 'leasehold.config.json';
export const DEFAULT_DATA_DIR = '.leasehold/data';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3000;

const postgresUrl = urlWithScheme(['postgres', 'postgresql'], 'a postgres:// or postgresql:// URL');

const TRUSTED_PROXY = 'an IP address or a CIDR range such as "10.0.0.0/8" or "fd00::/8"';

/** `"<text>"`, cut short: a problem quotes what it found, not a whole page of it. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

const trustedProxy = z
  .string({ error: `expected ${TRUSTED_PROXY}` })
  .superRefine((text, ctx) => {
    const parsed = parseAddressRange(text);
    if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: `expected ${TRUSTED_PROXY}, found ${quoted(text)}, ${parsed.problem}` });
  })
  .transform((text) => text.trim());

export const fileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    sources: z.array(sourceSchema).default([]),
    pollMs: pollMs.default(1000),
    retention: z
      .strictObject({
        rollupDays: z.number().int().min(1).default(30),
        eventDays: z.number().int().min(1).default(90),
        renewalSamplesPerLease: z.number().int().min(10).max(10_000).default(120),
      })
      .prefault({}),
    metrics: z
      .strictObject({
        // Per-lease series on /metrics for at most this many leases (0: none); see README, Metrics.
        leaseSeriesLimit: z.number().int().min(0).max(100_000).default(1_000),
      })
      .prefault({}),
    auth: authSchema,
    alerts: alertsSchema,
    /**
     * The reverse proxies whose X-Forwarded-For is believed (lib/api/peer.ts): addresses and
     * CIDR ranges. None by default: the socket's address is then the client's, whatever it sends.
     * LEASEHOLD_TRUSTED_PROXIES replaces it.
     */
    trustedProxies: z
      .array(trustedProxy, { error: 'expected a list of IP addresses and CIDR ranges such as ["127.0.0.1", "10.0.0.0/8"]' })
      .default([]),
  })
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.sources.forEach((source, index) => {
      const first = seen.get(source.name);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['sources', index, 'name'],
          message: `expected a name no other source uses, found "${source.name}", already the name of sources[${first}]`,
        });
      } else {
        seen.set(source.name, index);
      }
    });
  });

export type { SourceConfig };
export type FileConfig = z.output<typeof fileSchema>;

export type { StoreConfig };

export type Config = FileConfig & {
  /** Where the file came from, or null when none exists and defaults apply. */
  file: string | null;
  /**
   * The embedded demo (lib/demo): on the embedded store with no sources configured, unless
   * LEASEHOLD_DEMO=off. Its one source, `demo` (lib/demo/source.ts), is then the config's only
   * source, validated by the same schema as a file's.
   */
  demo: boolean;
  store: StoreConfig;
  host: string;
  port: number;
  /** The collector's ownership lease on each source (LEASEHOLD_COLLECTOR_LEASE_TTL_MS): how soon a dead collector's sources move. */
  collectorLeaseTtlMs: number;
  /** LEASEHOLD_ALLOWED_HOSTS: the Host names requests may carry (lib/api/host.ts), `*` for any; null for the default. */
  allowedHosts: string[] | null;
  /** LEASEHOLD_STREAM_MAX_CLIENTS and _PER_ADDRESS: live streams open at once in this process, and from one address. */
  stream: { maxClients: number; maxClientsPerAddress: number };
};

export const DEFAULT_STREAM_MAX_CLIENTS = 500;
export const DEFAULT_STREAM_MAX_CLIENTS_PER_ADDRESS = 50;

export const DEFAULT_COLLECTOR_LEASE_TTL_MS = 10_000;

export const envSchema = z.object({
  DATABASE_URL: z.preprocess(blankToUndefined, postgresUrl.optional()),
  PORT: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'expected a port number' })
      .int({ error: 'expected a whole port number' })
      .min(1, { error: 'expected a port from 1 to 65535' })
      .max(65535, { error: 'expected a port from 1 to 65535' })
      .default(DEFAULT_PORT),
  ),
  HOST: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[A-Za-z0-9.:[\]-]+$/, { error: 'expected a host name or IP address to listen on' })
      .default(DEFAULT_HOST),
  ),
  LEASEHOLD_DATA_DIR: z.preprocess(blankToUndefined, z.string().default(DEFAULT_DATA_DIR)),
  LEASEHOLD_COLLECTOR_LEASE_TTL_MS: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'expected a time in milliseconds' })
      .int({ error: 'expected a whole number of milliseconds' })
      .min(2_000, { error: 'expected at least 2000 ms (a shorter ownership lease moves sources on every hiccup)' })
      .max(600_000, { error: 'expected at most 600000 ms (10 minutes)' })
      .default(DEFAULT_COLLECTOR_LEASE_TTL_MS),
  ),
  LEASEHOLD_STREAM_MAX_CLIENTS: streamCount(DEFAULT_STREAM_MAX_CLIENTS),
  LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS: streamCount(DEFAULT_STREAM_MAX_CLIENTS_PER_ADDRESS),
  /** Overrides the file's auth.anonymousRole: "viewer", or "none" for no anonymous access. */
  LEASEHOLD_ANONYMOUS_ROLE: z.preprocess(blankToUndefined, z.enum(['viewer', 'none'], { error: 'expected "viewer" or "none"' }).optional()),
  LEASEHOLD_ALLOWED_HOSTS: z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((text) => parseAllowedHosts(text) !== null, {
        error: 'expected a comma-separated list of host names or addresses, each optionally with :port ([::1]:3000 for IPv6), or *',
      })
      .transform((text) => parseAllowedHosts(text)!)
      .optional(),
  ),
  /** Replaces the file's trustedProxies: comma-separated addresses and CIDR ranges. */
  LEASEHOLD_TRUSTED_PROXIES: z.preprocess(
    blankToUndefined,
    z
      .string()
      .superRefine((text, ctx) => {
        const expected = 'expected a comma-separated list of IP addresses and CIDR ranges such as "127.0.0.1,10.0.0.0/8,fd00::/8"';
        const entries = text.split(',');
        entries.forEach((entry, index) => {
          if (entry.trim() === '') return;
          const parsed = parseAddressRange(entry);
          if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: `${expected}, found ${quoted(entry.trim())} (entry ${index + 1}), ${parsed.problem}` });
        });
        if (entries.every((entry) => entry.trim() === '')) ctx.addIssue({ code: 'custom', message: `${expected}, found ${quoted(text)}` });
      })
      .transform((text) => text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== ''))
      .optional(),
  ),
});

/** A cap on live streams (lib/live/stream.ts): a whole number from 1 to 1,000,000. */
function streamCount(fallback: number) {
  return z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'expected a whole number of streams from 1 to 1000000' })
      .int({ error: 'expected a whole number of streams from 1 to 1000000' })
      .min(1, { error: 'expected a whole number of streams from 1 to 1000000' })
      .max(1_000_000, { error: 'expected a whole number of streams from 1 to 1000000' })
      .default(fallback),
  );
}

export function blankToUndefined(value: unknown) {
  return typeof value === 'string' && value.trim() === '' ? undefined : value;
}
