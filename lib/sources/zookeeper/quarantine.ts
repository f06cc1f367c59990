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
import type { Client } from 'node-zookeeper-client';
import { isNoNode, withDeadline, CALL_TIMEOUT_MS } from './client';

export type QuarantineSweeper = {
  /** A quarantine node a read saw: deleted at its end (its version as read, so a node changed since is left). */
  saw(nodePath: string, untilMs: number, version: number): void;
  close(): void;
};

/**
 * Ends the quarantines its source's reads see, each at its end. A deletion that fails is
 * forgotten, so the next read that sees the node schedules it again (at once, being past due).
 */
export function createQuarantineSweeper(client: (signal: AbortSignal) => Promise<Client>, wallNow: () => number, log: (line: string) => void = () => {}): QuarantineSweeper {
  const timers = new Map<string, NodeJS.Timeout>();
  let closed = false;
  const end = async (nodePath: string, version: number) => {
    const signal = AbortSignal.timeout(CALL_TIMEOUT_MS * 2);
    try {
      const zk = await client(signal);
      await withDeadline(new Promise<void>((resolve, reject) => zk.remove(nodePath, version, (error) => (error && !isNoNode(error) ? reject(error) : resolve()))), signal, CALL_TIMEOUT_MS, `deleting ${nodePath}`);
    } catch (error) {
      log(`the quarantine ${nodePath} could not be ended yet (${String((error as Error)?.message ?? error).slice(0, 200)}); it is tried again at the next read`);
    } finally {
      timers.delete(nodePath);
    }
  };
  return {
    saw(nodePath, untilMs, version) {
      if (closed || timers.has(nodePath)) return;
      // setTimeout's longest wait is 2^31-1 ms; a quarantine is at most an hour.
      const timer = setTimeout(() => void end(nodePath, version), Math.min(Math.max(0, untilMs - wallNow()), 2 ** 31 - 1));
      timer.unref();
      timers.set(nodePath, timer);
    },
    close() {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
