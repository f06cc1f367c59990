// A lock between processes on one machine: a directory (made atomically by mkdir) holding the
// holder's pid. A holder that has died (killed mid-work) does not keep it: its lock is taken over.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export type DirLockOptions = {
  /** Called once, when the lock is held by another live process and this one starts waiting. */
  onWait?: (holderPid: number | null) => void;
  pollMs?: number;
};

/** Takes the lock at `dir`, waiting while another live process holds it; resolves to the release function. */
export async function takeDirLock(dir: string, options: DirLockOptions = {}): Promise<() => void> {
  mkdirSync(path.dirname(dir), { recursive: true });
  let waiting = false;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'pid'), `${process.pid}\n`);
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = 0;
    let age = 0;
    try {
      age = Date.now() - statSync(dir).mtimeMs;
      holder = Number.parseInt(readFileSync(path.join(dir, 'pid'), 'utf8'), 10) || 0;
    } catch {
      // released between the calls, or made and its pid not yet written
    }
    // A holder that is gone, or a lock left without a pid for 10 s (its maker died at once): taken over.
    if ((holder && !alive(holder)) || (!holder && age > 10_000)) {
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (!waiting) {
      waiting = true;
      options.onWait?.(holder || null);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
}
