// A lock between processes on one machine: a directory (made atomically by mkdir) holding the
// holder's pid and the machine's boot. A holder that has died (killed mid-work), or that ran
// before the machine last started (its pid may belong to another process now), does not keep
// it: its lock is taken over. Taking over is itself done under a second, short-lived lock, so
// that two waiters finding the same dead holder cannot both take it (the second would remove
// the lock the first had just made).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processAlive } from '../../lib/db/process-alive';

const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';
let bootIdRead: string | undefined;
/** This machine's boot (Linux), read once; '' where there is none. */
const bootId = () => {
  if (bootIdRead === undefined) {
    try {
      bootIdRead = existsSync(BOOT_ID_FILE) ? readFileSync(BOOT_ID_FILE, 'utf8').trim() : '';
    } catch {
      bootIdRead = '';
    }
  }
  return bootIdRead;
};

type Holder = { pid: number; boot: string } | null;

function readHolder(dir: string): Holder {
  try {
    const [pid, boot] = readFileSync(path.join(dir, 'pid'), 'utf8').split('\n');
    const n = Number.parseInt(pid ?? '', 10);
    return Number.isFinite(n) && n > 0 ? { pid: n, boot: (boot ?? '').trim() } : null;
  } catch {
    return null;
  }
}

const ageMs = (dir: string) => {
  try {
    return Date.now() - statSync(dir).mtimeMs;
  } catch {
    return 0;
  }
};

/** Whether the lock at `dir` is held by nobody alive: its holder is gone, or is from before this boot, or it has had no holder for 10 s. */
function abandoned(dir: string): boolean {
  const holder = readHolder(dir);
  if (!holder) return ageMs(dir) > 10_000; // made and its pid never written: its maker died at once
  if (holder.boot && holder.boot !== bootId()) return true;
  return !processAlive(holder.pid);
}

/** Removes the lock at `dir` if it is still abandoned, under a takeover lock; true when it was removed. */
function takeOver(dir: string): boolean {
  const guard = `${dir}.takeover`;
  try {
    mkdirSync(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another waiter is taking it over; a takeover lock a process died holding is cleared after 10 s.
    if (ageMs(guard) > 10_000) rmSync(guard, { recursive: true, force: true });
    return false;
  }
  try {
    if (!abandoned(dir)) return false; // taken meanwhile by a live process
    // Renamed away first, then removed: a lock is never seen half removed.
    const gone = `${dir}.abandoned-${process.pid}`;
    renameSync(dir, gone);
    rmSync(gone, { recursive: true, force: true });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true; // released meanwhile
    throw error;
  } finally {
    rmSync(guard, { recursive: true, force: true });
  }
}

export type DirLockOptions = {
  /** Called once, when the lock is held by another live process and this one starts waiting. */
  onWait?: (holderPid: number | null) => void;
  pollMs?: number;
  /** How long to wait for another holder before giving up with an error (default 15 minutes). */
  maxWaitMs?: number;
};

/** Takes the lock at `dir`, waiting while another live process holds it; resolves to the release function. */
export async function takeDirLock(dir: string, options: DirLockOptions = {}): Promise<() => void> {
  mkdirSync(path.dirname(dir), { recursive: true });
  const started = Date.now();
  const maxWaitMs = options.maxWaitMs ?? 15 * 60_000;
  let waiting = false;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'pid'), `${process.pid}\n${bootId()}\n`);
      // Released only while it is still ours: never a lock another process has taken since.
      return () => {
        if (readHolder(dir)?.pid === process.pid) rmSync(dir, { recursive: true, force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (abandoned(dir) && takeOver(dir)) continue;
    const holder = readHolder(dir);
    if (Date.now() - started > maxWaitMs) {
      throw new Error(`waited ${Math.round(maxWaitMs / 60_000)} min for the lock ${dir}, held by pid ${holder?.pid ?? '?'}; if no such process is working, remove that directory`);
    }
    if (!waiting) {
      waiting = true;
      options.onWait?.(holder?.pid ?? null);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
}
