// The build lock (scripts/tooling/dir-lock.ts): one holder at a time, the others wait; a dead holder's lock is taken over.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { takeDirLock } from '../../scripts/tooling/dir-lock';

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leasehold-lock-'));
  dirs.push(dir);
  return path.join(dir, 'sub', 'build.lock');
};
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('takeDirLock', () => {
  it('lets one holder in at a time; the second gets it when the first releases', async () => {
    const lock = scratch();
    const release = await takeDirLock(lock);
    expect(readFileSync(path.join(lock, 'pid'), 'utf8').split('\n')[0]).toBe(String(process.pid));

    let waitedFor: number | null | undefined;
    let second = false;
    const taking = takeDirLock(lock, { pollMs: 20, onWait: (pid) => (waitedFor = pid) }).then((r) => {
      second = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(second).toBe(false);
    expect(waitedFor).toBe(process.pid);

    release();
    const releaseSecond = await taking;
    expect(second).toBe(true);
    releaseSecond();
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over the lock of a process that has died', async () => {
    const lock = scratch();
    // A pid that existed and is gone: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    mkdirSync(lock, { recursive: true });
    writeFileSync(path.join(lock, 'pid'), `${dead}\n`);
    let waited = false;
    const release = await takeDirLock(lock, { pollMs: 20, onWait: () => (waited = true) });
    expect(waited).toBe(false);
    expect(readFileSync(path.join(lock, 'pid'), 'utf8').split('\n')[0]).toBe(String(process.pid));
    release();
  });

  it('waits for a live holder in another process, and does not take over a fresh lock without a pid', async () => {
    const lock = scratch();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      mkdirSync(lock, { recursive: true });
      writeFileSync(path.join(lock, 'pid'), `${holder.pid}\n`);
      let got = false;
      void takeDirLock(lock, { pollMs: 20 }).then((release) => {
        got = true;
        release();
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(got).toBe(false); // the holder lives

      rmSync(path.join(lock, 'pid')); // as if its maker had not written the pid yet
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(got).toBe(false); // a lock made a moment ago is not taken

      const old = new Date(Date.now() - 60_000);
      utimesSync(lock, old, old); // ...but one left without a pid for a minute is
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(got).toBe(true);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('takes over a lock from before the machine last started, even when its pid is alive now', async () => {
    const lock = scratch();
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      mkdirSync(lock, { recursive: true });
      writeFileSync(path.join(lock, 'pid'), `${other.pid}\nsome-earlier-boot\n`);
      const release = await takeDirLock(lock, { pollMs: 20, maxWaitMs: 2_000 });
      expect(readFileSync(path.join(lock, 'pid'), 'utf8').split('\n')[0]).toBe(String(process.pid));
      release();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('does not release a lock that another process holds by then, and gives up waiting with an error naming the lock', async () => {
    const lock = scratch();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      const release = await takeDirLock(lock);
      writeFileSync(path.join(lock, 'pid'), `${holder.pid}\n`); // as if taken over since
      release();
      expect(existsSync(lock)).toBe(true);
      await expect(takeDirLock(lock, { pollMs: 20, maxWaitMs: 100 })).rejects.toThrow(`for the lock ${lock}, held by pid ${holder.pid}`);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('lets exactly one of several processes at a time in, when they all find the same dead holder', async () => {
    const lock = scratch();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    mkdirSync(lock, { recursive: true });
    writeFileSync(path.join(lock, 'pid'), `${dead}\n`);
    const log = path.join(path.dirname(lock), 'log');
    const worker = path.join(path.dirname(lock), 'worker.mts');
    writeFileSync(
      worker,
      `import { appendFileSync } from 'node:fs';
       import { takeDirLock } from ${JSON.stringify(path.resolve('scripts/tooling/dir-lock.ts'))};
       const release = await takeDirLock(${JSON.stringify(lock)}, { pollMs: 5 });
       appendFileSync(${JSON.stringify(log)}, 'in ' + process.pid + '\\n');
       await new Promise((r) => setTimeout(r, 150));
       appendFileSync(${JSON.stringify(log)}, 'out ' + process.pid + '\\n');
       release();`,
    );
    const workers = Array.from({ length: 4 }, () => spawn(process.execPath, ['--import', 'tsx', worker], { stdio: 'inherit' }));
    const codes = await Promise.all(workers.map((w) => new Promise((resolve) => w.on('exit', resolve))));
    expect(codes).toEqual([0, 0, 0, 0]);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(8);
    // In, out, in, out...: never two inside at once.
    for (let i = 0; i < lines.length; i += 2) {
      const [enter, leave] = [lines[i]!.split(' '), lines[i + 1]!.split(' ')];
      expect([enter[0], leave[0], leave[1]]).toEqual(['in', 'out', enter[1]]);
    }
  }, 30_000);
});

