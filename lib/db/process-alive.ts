// Whether a pid belongs to a live process: the stale-lock checks of the embedded store
// (lib/db/embedded.ts), the build lock (scripts/tooling/dir-lock.ts) and the template's sweep share it.
import { readFileSync } from 'node:fs';

/** True when pid names a running process that is not a zombie. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..."; a zombie still answers kill -0.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}
