// Independent Redis instances for Redlock tests, started and stopped by the test itself
// (redis-server is installed by scripts/services.sh). Ports below 32768.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';

export type RedisServer = {
  port: number;
  url: string;
  /** The running server process (a new one after restart()). */
  process: ChildProcess;
  /** SIGKILL: the server dies as a crash kills it (what it keeps on disk, if told to keep anything, survives). */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (after kill()). */
  restart(): Promise<void>;
  stop(): Promise<void>;
};

async function answers(port: number): Promise<boolean> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** `args`: more server options, such as ['--notify-keyspace-events', 'KEA'] or ['--appendonly', 'yes'] (later options win). */
export async function startRedisServer(port: number, args: string[] = []): Promise<RedisServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'leasehold-redis-'));
  const spawnServer = async () => {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args], {
      stdio: 'ignore',
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    for (let i = 0; i < 100 && !(await answers(port)); i++) await new Promise((r) => setTimeout(r, 50));
    if (!(await answers(port))) throw new Error(`redis-server on port ${port} did not start`);
    return { child, exited };
  };
  let current = await spawnServer();
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    process: current.child,
    async kill() {
      const { child, exited } = current;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async restart() {
      await server.kill();
      current = await spawnServer();
      server.process = current.child;
    },
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
