// `npm run demo` with a bad option stops before starting anything (no services, no databases),
// naming what was wrong, with the usage line.
import { expect, it } from 'vitest';
import { STACK_LINE, run } from '../support/run';

const demo = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', ...args], { timeoutMs: 30_000 });

it.each([
  [['--backends', 'postgres,mysql'], '--backends takes a comma-separated list of postgres, redis, etcd, zookeeper; unknown: mysql'],
  [['--backends='], '--backends takes a comma-separated list of postgres, redis, etcd, zookeeper; got none'],
  [['--servers', '1'], '--servers takes a whole number from 2 to 40; got "1"'],
  [['--servers', 'many'], '--servers takes a whole number from 2 to 40; got "many"'],
  [['--servers', '41'], '--servers takes a whole number from 2 to 40; got "41"'],
  [['--port', '70000'], '--port takes a whole number from 1 to 65535; got "70000"'],
  [['--faults', 'maybe'], '--faults takes on or off; got "maybe"'],
  [['--seconds'], '--seconds takes a whole number from 1 to 86400; got ""'],
  [['--backend', 'redis'], 'unknown option "--backend"'],
])('refuses %j before starting anything', async (args, message) => {
  const result = await demo(...args);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(`demo: ${message}`);
  expect(result.stderr).toContain('usage: npm run demo --');
  expect(result.stdout).not.toContain('starting the services');
  expect(result.stderr).not.toMatch(STACK_LINE);
});

it('prints its usage with --help', async () => {
  const result = await demo('--help');
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('usage: npm run demo -- [--backends postgres,redis,etcd,zookeeper]');
});
