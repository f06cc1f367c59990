// Runs a project command (the CLI, npm start) as a child process and collects its output.
import { spawn } from 'node:child_process';
import { ROOT } from './services';

export type RunResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number };

export function run(
  command: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; timeoutMs?: number; cwd?: string } = {},
): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** The CLI as a user runs it: `npm run leasehold -- …` minus npm's own chatter. */
export function cli(args: string[], env: Record<string, string | undefined> = {}) {
  return run(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', ...args], { env });
}

/** A stack trace line, which must never reach a person. */
export const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/m;
