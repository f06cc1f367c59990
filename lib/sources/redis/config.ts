// A Redis source's entry in the config file (docs/configuration.md).
import { z } from 'zod';
import { sourceEntry, urlWithScheme } from '../config-parts';

const redisUrl = urlWithScheme(['redis', 'rediss'], 'a redis:// or rediss:// URL');

export const redisSource = sourceEntry('redis', {
  urls: z.array(redisUrl).min(1, { error: 'expected at least one redis:// URL' }),
  /** `single`: one instance (urls must have one entry); `redlock`: a quorum over independent instances. */
  mode: z.enum(['single', 'redlock']).optional(),
  match: z.array(z.string().min(1, { error: 'expected a non-empty key pattern' })).min(1).default(['*']),
  fenceSuffix: z.string().min(1).default(':fence'),
  /** `auto` uses keyspace notifications when the server has them on; `enable` turns them on (changes the server's config). */
  keyspaceNotifications: z.enum(['auto', 'off', 'enable']).default('auto'),
}).superRefine((source, ctx) => {
  if (source.mode === 'single' && source.urls.length > 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['mode'],
      message: `expected "redlock" for ${source.urls.length} urls ("single" takes exactly one), found "single"`,
    });
  }
});

export type RedisSourceConfig = z.output<typeof redisSource>;
