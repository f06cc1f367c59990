// Runs a command with this process's terminal, passing SIGINT and SIGTERM on to it: a build
// started by `npm start` (or by the demo) ends when they are told to end, instead of running on
// alone, holding the build lock and writing .next.
import { spawn } from 'node:child_process';

export type ChildResult = { code: number | null; signal: NodeJS.Signals | null };

export function runChild(command: string, args: string[], cwd: string): Promise<ChildResult> {
  const child = spawn(command, args, { cwd, stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => {
    const done = (result: ChildResult) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(result);
    };
    child.once('error', () => done({ code: 127, signal: null })); // could not be started
    child.once('exit', (code, signal) => done({ code, signal }));
  });
}

/** How a child's end reads in a message: "exit 1" or "SIGTERM". */
export const describeEnd = ({ code, signal }: ChildResult) => signal ?? `exit ${code}`;
