// The pieces every backend's config entry is built from (lib/sources/<kind>/config.ts): its
// name, its poll interval, and URLs with the schemes it reads. Messages that begin with
// "expected" are used as they are by lib/config/issues.ts.
import { z } from 'zod';

export const sourceName = z
  .string({ error: 'expected a source name (text)' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
    error: 'expected a source name of 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit',
  });

export const pollMs = z
  .number({ error: 'expected a number of milliseconds' })
  .int({ error: 'expected a whole number of milliseconds' })
  .min(100, { error: 'expected at least 100 ms' })
  .max(600_000, { error: 'expected at most 600000 ms (10 minutes)' });

/** A URL whose scheme is one of `schemes` and which names a host (or which `orElse` accepts). */
export function urlWithScheme(schemes: string[], what: string, orElse: (value: string) => boolean = () => false) {
  return z.string({ error: `expected ${what}` }).refine(
    (value) => {
      if (orElse(value)) return true;
      try {
        const url = new URL(value);
        return schemes.includes(url.protocol.replace(/:$/, '')) && url.host !== '';
      } catch {
        return false;
      }
    },
    { error: `expected ${what}` },
  );
}

/**
 * A canary lease (opt-in, off unless given): the collector that owns the source holds `key`
 * with lib/lease in the source's own layout, renewing it every `everyMs`, and times each
 * call (lib/collector/canary.ts). It writes to the backend: the key must be one no
 * application uses. Leasehold leaves it out of the source's leases.
 */
export const canaryEntry = z
  .strictObject({
    key: z.string({ error: 'expected a key for the canary lease (text)' }).min(1, { error: 'expected a non-empty canary key' }).max(200, { error: 'expected a canary key of at most 200 characters' }),
    ttlMs: z.number({ error: 'expected a number of milliseconds' }).int({ error: 'expected a whole number of milliseconds' }).min(1_000, { error: 'expected at least 1000 ms' }).max(600_000, { error: 'expected at most 600000 ms (10 minutes)' }).default(10_000),
    everyMs: pollMs.default(2_000),
  })
  .superRefine((canary, ctx) => {
    if (canary.everyMs * 2 > canary.ttlMs) {
      ctx.addIssue({ code: 'custom', path: ['everyMs'], message: `expected at most half the canary's ttlMs (${canary.ttlMs / 2} ms), so that one late renewal does not lose it, found ${canary.everyMs}` });
    }
  });

export type CanaryEntry = z.output<typeof canaryEntry>;

/** The fields every source entry has, whatever its kind: `backend` is the kind's literal. */
export function sourceEntry<K extends string, S extends z.ZodRawShape>(kind: K, shape: S) {
  return z.strictObject({ name: sourceName, backend: z.literal(kind), ...shape, pollMs: pollMs.optional(), canary: canaryEntry.optional() });
}
