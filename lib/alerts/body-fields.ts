// The fields the management bodies share (lib/alerts/manage.ts, rule-bodies.ts): a name, a
// scope, a number of milliseconds.
import { z } from 'zod';
import { parseScope } from '../domain/alert-scope';

export const name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9 ._@:()-]{0,99}$/, { error: 'expected 1-100 letters, digits, spaces, ".", "_", "@", ":", "(", ")" or "-", starting with a letter or digit' });

export const ms = (max: number) => z.number({ error: 'expected a number of milliseconds' }).int().min(0).max(max);

export const scope = z.string().transform((text, ctx) => {
  const parsed = parseScope(text);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  }
  return parsed.scope;
});
