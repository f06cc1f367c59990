// Real Apache Curator participants for the ZooKeeper tests: curator/CuratorHolder.java, built
// with javac from Debian's jars (scripts/services.sh installs them) into .leasehold/curator the
// first time, and run as child processes that hold a lock or lead until told to let go, are
// killed (SIGKILL: the session is left to expire) or paused (SIGSTOP).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './services';

const SOURCE = path.join(ROOT, 'tests', 'support', 'curator', 'CuratorHolder.java');
const CLASSES = path.join(ROOT, '.leasehold', 'curator', 'classes');
const JARS = ['curator-client', 'curator-framework', 'curator-recipes', 'zookeeper', 'zookeeper-jute', 'guava', 'slf4j-api', 'slf4j-nop'];
const CLASSPATH = JARS.map((jar) => `/usr/share/java/${jar}.jar`).join(':');

/** Builds CuratorHolder once (again when its source is newer); concurrent workers each build apart and rename. */
export function buildCuratorHolder(): string {
  const built = path.join(CLASSES, 'CuratorHolder.class');
  if (existsSync(built) && statSync(built).mtimeMs >= statSync(SOURCE).mtimeMs) return CLASSES;
  for (const jar of JARS) if (!existsSync(`/usr/share/java/${jar}.jar`)) throw new Error(`/usr/share/java/${jar}.jar is missing: run \`bash scripts/services.sh up\` (it installs Curator)`);
  mkdirSync(path.dirname(CLASSES), { recursive: true });
  const scratch = mkdtempSync(path.join(path.dirname(CLASSES), 'build-'));
  execFileSync('javac', ['-d', scratch, '-cp', CLASSPATH, SOURCE], { stdio: 'pipe' });
  rmSync(CLASSES, { recursive: true, force: true });
  try {
    renameSync(scratch, CLASSES);
  } catch {
    rmSync(scratch, { recursive: true, force: true }); // another worker's build won
  }
  return CLASSES;
}

export type CuratorRecipe = 'mutex' | 'latch' | 'selector';

export type CuratorHolder = {
  child: ChildProcess;
  id: string;
  /** Resolves once the holder printed `line` ("STARTED", "HELD", "LEADER", "RELEASED"). */
  saw(line: string, timeoutMs?: number): Promise<void>;
  /** Whether the holder has printed `line` so far. */
  printed(line: string): boolean;
  /** Lets go as the recipe does (release, close). */
  release(): void;
  signal(signal: NodeJS.Signals): void;
  /** Ends the process (SIGKILL) and waits for it. */
  stop(): Promise<void>;
};

export function startCuratorHolder(options: { connect: string; recipe: CuratorRecipe; path: string; id: string; sessionMs?: number }): CuratorHolder {
  const classes = buildCuratorHolder();
  const child = spawn('java', ['-Xmx64m', '-XX:TieredStopAtLevel=1', '-cp', `${classes}:${CLASSPATH}`, 'CuratorHolder', options.connect, options.recipe, options.path, options.id, String(options.sessionMs ?? 4_000)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let output = '';
  const waiters: (() => void)[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const parts = output.split('\n');
    output = parts.pop()!;
    lines.push(...parts.map((l) => l.trim()));
    for (const wake of waiters.splice(0)) wake();
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => waiters.splice(0).forEach((wake) => wake()));
  return {
    child,
    id: options.id,
    async saw(line, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!lines.includes(line)) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Curator ${options.recipe} ${options.id} exited before "${line}": ${stderr}`);
        if (Date.now() > deadline) throw new Error(`Curator ${options.recipe} ${options.id} did not print "${line}" within ${timeoutMs} ms (printed: ${lines.join(', ')}; stderr: ${stderr.slice(-500)})`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    printed: (line) => lines.includes(line),
    release() {
      child.stdin!.write('release\n');
    },
    signal(signal) {
      child.kill(signal);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
