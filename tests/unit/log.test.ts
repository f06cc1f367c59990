// The server's log (lib/log.ts): JSON lines when stdout is not a terminal, an area per child,
// and no secret in any line, whether it is in the message, a field or an error's stack.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, lineLogger, type Logger, type LoggerOptions } from '../../lib/log';

const ROOT = path.resolve(__dirname, '..', '..');

type Line = Record<string, unknown> & { level: number; time: number; msg: string };

/** A logger writing to a buffer instead of stdout, and the lines it wrote. */
function captured(options: Omit<LoggerOptions, 'destination'> = {}): { log: Logger; text: () => string; lines: () => Line[] } {
  let text = '';
  const log = createLogger({ ...options, destination: { write: (chunk: string) => void (text += chunk) } });
  return { log, text: () => text, lines: () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Line) };
}

const saved = { level: process.env.LEASEHOLD_LOG_LEVEL, databaseUrl: process.env.DATABASE_URL };
const state = globalThis as typeof globalThis & { __leaseholdLog?: Logger };
afterEach(() => {
  for (const [name, value] of [['LEASEHOLD_LOG_LEVEL', saved.level], ['DATABASE_URL', saved.databaseUrl]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  delete state.__leaseholdLog;
});

describe('secrets', () => {
  it('a URL password in the message is not written; the rest of the message is', () => {
    const { log, text, lines } = captured();
    log.error('connect postgres://u:hunter2@127.0.0.1/db failed');
    log.info('reading %s', 'redis://:s3cr3t-pw@127.0.0.1:6379/0?password=qp-secret');
    expect(text()).not.toContain('hunter2');
    expect(text()).not.toContain('s3cr3t-pw');
    expect(text()).not.toContain('qp-secret');
    expect(lines().map((line) => line.msg)).toEqual([
      'connect postgres://u:***@127.0.0.1/db failed',
      'reading redis://:***@127.0.0.1:6379/0?password=***',
    ]);
  });

  it("an error's message and stack go through the same scrub", () => {
    const { log, text, lines } = captured();
    const error = new Error('connect postgres://u:hunter2@127.0.0.1/db failed');
    log.error({ err: error }, 'the store failed');
    log.error(error);
    log.warn({ reason: new Error('dns:user:grpc-pw@127.0.0.1:2379 refused') }, 'etcd');
    expect(text()).not.toContain('hunter2');
    expect(text()).not.toContain('grpc-pw');
    const [withField, alone, nested] = lines() as [Line, Line, Line];
    const err = withField.err as { type: string; message: string; stack: string };
    expect(err.type).toBe('Error');
    expect(err.message).toBe('connect postgres://u:***@127.0.0.1/db failed');
    expect(err.stack).toMatch(/^Error: connect postgres:\/\/u:\*\*\*@127\.0\.0\.1\/db failed\n\s+at /);
    expect(alone.msg).toBe('connect postgres://u:***@127.0.0.1/db failed');
    expect((nested.reason as { stack: string }).stack).toContain('dns:user:***@127.0.0.1:2379');
  });

  it('fields named password, token, secret, authorization or cookie are censored, at any depth', () => {
    const { log, text, lines } = captured();
    log.info(
      {
        password: 'pw-top',
        token: 'tok-top',
        Secret: 'sec-top',
        headers: { authorization: 'Bearer tok-header', cookie: 'sid=cookie-value' },
        source: { name: 'pg', deeper: { password: 'pw-deep' }, url: new URL('postgres://u:pw-url@h/db') },
        holder: 'worker-1',
      },
      'fields',
    );
    for (const secret of ['pw-top', 'tok-top', 'sec-top', 'tok-header', 'cookie-value', 'pw-deep', 'pw-url']) expect(text()).not.toContain(secret);
    const [line] = lines() as [Line];
    expect(line).toMatchObject({
      password: '***',
      token: '***',
      Secret: '***',
      headers: { authorization: '***', cookie: '***' },
      source: { name: 'pg', deeper: { password: '***' }, url: 'postgres://u:***@h/db' },
      holder: 'worker-1',
    });
  });

  it("every secret of the config is scrubbed, also where it is not in a URL (a driver quoting it)", () => {
    process.env.DATABASE_URL = 'postgres://leasehold:raw-pw-7@127.0.0.1:5432/leasehold';
    const { log, text, lines } = captured();
    log.error('password "raw-pw-7" rejected');
    expect(text()).not.toContain('raw-pw-7');
    expect(lines()[0]!.msg).toBe('password "***" rejected');
  });
});

describe('format', () => {
  it('writes one JSON object a line, with level, time and msg', () => {
    const { log, text, lines } = captured();
    const before = Date.now();
    log.info('store ready in 12 ms: 4 of 4 migrations applied');
    log.warn('second');
    expect(text().endsWith('\n')).toBe(true);
    const [first, second] = lines() as [Line, Line];
    expect(first.level).toBe(30);
    expect(second.level).toBe(40);
    expect(first.time).toBeGreaterThanOrEqual(before);
    expect(first.time).toBeLessThanOrEqual(Date.now());
    expect(first.msg).toBe('store ready in 12 ms: 4 of 4 migrations applied');
  });

  it('on a stdout that is not a terminal, the default logger writes JSON (what a test reading the server sees)', () => {
    const script = "import { logger } from './lib/log.ts'; logger('boot').info('SIGTERM: closing the store');";
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, LEASEHOLD_LOG_LEVEL: '' },
    });
    expect(result.status, result.stderr).toBe(0);
    const line = JSON.parse(result.stdout.trim()) as Line;
    expect(line).toMatchObject({ level: 30, area: 'boot', msg: 'SIGTERM: closing the store' });
    expect(typeof line.time).toBe('number');
  });

  it('pretty, it writes a readable line naming the area, not JSON', async () => {
    let text = '';
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => ((text += chunk.toString()), done()) });
    const log = createLogger({ pretty: true, destination: sink });
    log.child({ area: 'collector' }).info('observing pg (ownership token 3) postgres://u:hunter2@h/db');
    await new Promise((resolve) => setImmediate(resolve));
    expect(text).toMatch(/INFO.*: collector: observing pg \(ownership token 3\) postgres:\/\/u:\*\*\*@h\/db\n$/);
    expect(text).not.toContain('hunter2');
    expect(() => JSON.parse(text) as unknown).toThrow();
  });
});

describe('areas and levels', () => {
  it('a child carries its area', () => {
    const { log, lines } = captured();
    log.child({ area: 'collector' }).info('vm:1:abc started for 2 sources');
    log.info('no area');
    const [child, root] = lines() as [Line, Line];
    expect(child.area).toBe('collector');
    expect(root.area).toBeUndefined();
  });

  it("lineLogger gives the collector's (line: string) => void, info, warn for a `warning:` line", () => {
    const { log, lines } = captured();
    state.__leaseholdLog = log;
    const line = lineLogger('store');
    line('applied 20261202000000_init (3 ms)');
    line('warning: the database has migrations this version does not know: x');
    expect(lines().map(({ level, area, msg }) => ({ level, area, msg }))).toEqual([
      { level: 30, area: 'store', msg: 'applied 20261202000000_init (3 ms)' },
      { level: 40, area: 'store', msg: 'warning: the database has migrations this version does not know: x' },
    ]);
  });

  it('LEASEHOLD_LOG_LEVEL sets the level; info by default', () => {
    delete process.env.LEASEHOLD_LOG_LEVEL;
    const byDefault = captured();
    byDefault.log.debug('hidden');
    byDefault.log.info('shown');
    expect(byDefault.lines().map((line) => line.msg)).toEqual(['shown']);

    process.env.LEASEHOLD_LOG_LEVEL = 'WARN';
    const warn = captured();
    warn.log.info('hidden');
    warn.log.warn('shown');
    expect(warn.lines().map((line) => line.msg)).toEqual(['shown']);
  });

  it('a LEASEHOLD_LOG_LEVEL that is not a level is said once, and info is used', () => {
    process.env.LEASEHOLD_LOG_LEVEL = 'loud';
    const { log, lines } = captured();
    log.debug('hidden');
    log.info('shown');
    const [problem, shown] = lines() as [Line, Line];
    expect(problem.level).toBe(40);
    expect(problem.msg).toContain('LEASEHOLD_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, found "loud"');
    expect(shown.msg).toBe('shown');
    expect(lines()).toHaveLength(2);
  });
});
