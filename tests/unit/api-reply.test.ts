// A route's answer, declared with its schema (lib/api/reply.ts): sent as the value's own JSON,
// checked outside production.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { checkReplyBytes, reply, ReplyShapeError } from '../../lib/api/reply';

const schema = z.object({ name: z.string(), count: z.number() });

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('reply(schema, value)', () => {
  it('sends the value as it is, with no-store unless told otherwise', async () => {
    const response = reply(schema, { name: 'a', count: 1 }, { status: 201 });
    expect(response.status).toBe(201);
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    expect(await response.text()).toBe(JSON.stringify({ name: 'a', count: 1 }));
    const headers = new Headers({ 'Cache-Control': 'no-store, no-transform' });
    headers.append('Set-Cookie', 'a=1');
    headers.append('Set-Cookie', 'b=2');
    const withCookies = reply(schema, { name: 'a', count: 1 }, { headers });
    expect(withCookies.headers.get('Cache-Control')).toBe('no-store, no-transform');
    expect(withCookies.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
  });

  it('refuses an answer that does not match its schema, outside production', () => {
    const wrong = { name: 'a', count: '1' } as unknown as z.input<typeof schema>;
    expect(() => reply(schema, wrong)).toThrow(ReplyShapeError);
    expect(() => reply(schema, wrong)).toThrow(/count/);
    expect(() => checkReplyBytes(schema, Buffer.from('{"name":"a"}'))).toThrow(ReplyShapeError);
    vi.stubEnv('NODE_ENV', 'production');
    expect(reply(schema, wrong).status).toBe(200);
  });
});

describe('every route of app/api declares its answer', () => {
  it('answers JSON with reply(schema, value), never Response.json of its own (errors go through lib/errors.ts)', () => {
    const root = path.resolve(import.meta.dirname, '../../app/api');
    const routes = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('route.ts'));
    expect(routes.length).toBeGreaterThan(20);
    const undeclared = routes.filter((file) => /\b(?:Next)?Response\.json\(/.test(readFileSync(path.join(root, file), 'utf8')));
    expect(undeclared).toEqual([]);
  });
});
