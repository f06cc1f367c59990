// A quarantine on ZooKeeper (docs/admin-actions.md): after a forced action the lock is held by
// Leasehold for a while, so that no candidate takes it before the old holder has certainly
// stopped writing. It is a persistent node named
//
//   leasehold-quarantine-<end, ms since the epoch, 13 digits>-lock-   (or -latch- for a LeaderLatch)
//
// Curator orders a lock's children by what follows the last "lock-" ("latch-") in their names,
// its sequence: for this node that is the empty string, before every sequence. So every
// candidate queues behind it, watching it, and the first takes over the moment it is deleted.
// (Its name is made and read in curator.ts.) It is created in the same multi-op that deletes the forced holder's node, and deleted at its
// end by the ZooKeeper source observing the path (its reads schedule the deletion; a collector
// restarted meanwhile deletes it at its first read). It is persistent, not ephemeral, so that a
// console that stops does not end it early; if no Leasehold observes the path any more it is
// deleted by hand (`delete` in zkCli; its ACL is open for that), as docs/admin-actions.md says. It holds no token:
// the next holder's czxid is compared with the forced holder's, which was created before it.
import zookeeper, { type Client } from 'node-zookeeper-client';
import { isNoNode, withDeadline, CALL_TIMEOUT_MS } from './client';

export type QuarantineSweeper = {
  /** A quarantine node a read saw: deleted at its end (its version as read, so a node changed since is left). */
  saw(nodePath: string, untilMs: number, version: number): void;
  close(): void;
};

/** The longest wait between tries of a deletion that failed. */
const MAX_RETRY_MS = 30_000;

/**
 * Ends the quarantines its source's reads see, each at its end, by this process's clock. A
 * deletion that fails is tried again, waiting twice as long each time (up to 30 s), until it
 * succeeds, the node is gone or the source closes.
 */
export function createQuarantineSweeper(client: (signal: AbortSignal) => Promise<Client>, wallNow: () => number, log: (line: string) => void = () => {}): QuarantineSweeper {
  const timers = new Map<string, NodeJS.Timeout>();
  let closed = false;
  const schedule = (nodePath: string, untilMs: number, version: number, retryMs: number) => {
    // setTimeout's longest wait is 2^31-1 ms: a later end is waited for in steps (end() looks again).
    const timer = setTimeout(() => void end(nodePath, untilMs, version, retryMs), Math.min(Math.max(0, untilMs - wallNow()), 2 ** 31 - 1));
    timer.unref();
    timers.set(nodePath, timer);
  };
  const end = async (nodePath: string, untilMs: number, version: number, retryMs: number) => {
    if (closed) return;
    if (wallNow() < untilMs) return schedule(nodePath, untilMs, version, retryMs);
    const signal = AbortSignal.timeout(CALL_TIMEOUT_MS * 2);
    try {
      const zk = await client(signal);
      await withDeadline(new Promise<void>((resolve, reject) => zk.remove(nodePath, version, (error) => (error && !isNoNode(error) ? reject(error) : resolve()))), signal, CALL_TIMEOUT_MS, `deleting ${nodePath}`);
      timers.delete(nodePath);
    } catch (error) {
      if (closed) return;
      // Not the node that was seen (made again since): the next read that sees it schedules it anew.
      if ((error as { code?: number } | null)?.code === zookeeper.Exception.BAD_VERSION) return void timers.delete(nodePath);
      log(`the quarantine ${nodePath} could not be ended yet (${String((error as Error)?.message ?? error).slice(0, 200)}); trying again in ${retryMs / 1000} s`);
      schedule(nodePath, wallNow() + retryMs, version, Math.min(retryMs * 2, MAX_RETRY_MS));
    }
  };
  return {
    saw(nodePath, untilMs, version) {
      if (closed || timers.has(nodePath)) return;
      schedule(nodePath, untilMs, version, 1_000);
    },
    close() {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
