// A lease holder as its own OS process (tests/support/lease-holder.ts), forked for a test:
// `held` resolves with what it holds once it holds it; stop it with SIGSTOP, SIGKILL or SIGTERM.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { LeaseClientOptions } from '../../lib/lease';
import { ROOT } from './services';

const HOLDER = path.join(ROOT, 'tests', 'support', 'lease-holder.ts');

export type HolderOptions = {
  ttlMs: number;
  renewEveryMs: number;
  election?: boolean;
  /** Post timings (and, as a zombie, its code's own claim) to Leasehold's telemetry endpoint at `url`. */
  report?: { url: string; source: string; zombie?: boolean };
};

/** `children`: where the test keeps its processes, to kill them after each test. */
export function forkHolder(children: ChildProcess[], lease: LeaseClientOptions, key: string, name: string, options: HolderOptions) {
  const child = fork(HOLDER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, LEASEHOLD_HOLDER: JSON.stringify({ lease, key, holder: name, ...options }) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  const held = new Promise<{ holder: string; token: string }>((resolve) =>
    child.on('message', (message: { type: string; holder: string; token: string }) => {
      if (message.type === 'held') resolve(message);
    }),
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, held, exited };
}
