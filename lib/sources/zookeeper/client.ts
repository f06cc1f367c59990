// The ZooKeeper client of one source (node-zookeeper-client: pure JavaScript, so a fresh
// machine needs no compiler; it reads a znode's stat with its data and its children, and
// registers each watcher function once per path). Each call has a deadline; a session the
// server expired is replaced by a new one at the next read, and says so (its watches are gone).
import { setMaxListeners } from 'node:events';
import zookeeper, { type Client, type Event, type Stat, type Transaction } from 'node-zookeeper-client';
import type { ZookeeperSourceConfig } from './config';
import { serversOf } from './config';

export const CALL_TIMEOUT_MS = 2_000;
const CONNECT_TIMEOUT_MS = 3_000;

export type Watcher = (event: Event) => void;
export type NodeData = { data: Buffer; stat: Stat };

/** A ZooKeeper error that is an answer about one node, not a failure of the source. */
export const isNoNode = (error: unknown) => (error as { code?: number } | null)?.code === zookeeper.Exception.NO_NODE;

export type ZkConnection = {
  /** The connected client; a new session (and `renewed` called) when the last one expired or was never made. */
  client(signal: AbortSignal): Promise<Client>;
  /** Called when a new session replaced one that existed: its watches are gone. */
  onNewSession: (() => void) | null;
  /** Called as soon as the server says the session expired (its watches are gone with it). */
  onExpired: (() => void) | null;
  close(): void;
};

export function createZkConnection(config: ZookeeperSourceConfig): ZkConnection {
  let current: { client: Client; ready: Promise<Client>; dead: boolean } | null = null;
  let sessions = 0;
  let closed = false;
  const connection: ZkConnection = {
    onNewSession: null,
    onExpired: null,
    async client(signal) {
      // A read still in flight when the source closed opens nothing (its session would never be closed).
      if (closed) throw new Error('the read was cancelled');
      if (current && !current.dead) return withDeadline(current.ready, signal, CONNECT_TIMEOUT_MS, 'no session within 3 s');
      current?.client.close();
      const client = zookeeper.createClient(config.connect, { sessionTimeout: config.sessionTimeoutMs, spinDelay: 200, retries: 0 });
      if (config.digest) client.addAuthInfo('digest', Buffer.from(`${config.digest.username}:${config.digest.password}`));
      const entry = { client, dead: false, ready: new Promise<Client>((resolve) => client.once('connected', () => resolve(client))) };
      entry.ready.catch(() => {});
      client.on('expired', () => {
        entry.dead = true;
        connection.onExpired?.();
      });
      client.on('authenticationFailed', () => (entry.dead = true));
      current = entry;
      client.connect();
      if (sessions++ > 0) connection.onNewSession?.();
      try {
        return await withDeadline(entry.ready, signal, CONNECT_TIMEOUT_MS, 'no session within 3 s');
      } catch (error) {
        // Not connected in time: the next read starts afresh rather than wait on this one.
        entry.dead = true;
        client.close();
        throw error;
      }
    },
    close() {
      closed = true;
      current?.client.close();
      current = null;
    },
  };
  return connection;
}

/** A call's answer within `ms`, or a timeout error; the signal's abort ends the wait too. */
export function withDeadline<T>(promise: Promise<T>, signal: AbortSignal, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(() => reject(Object.assign(new Error(`timed out: ${what}`), { code: 'ETIMEDOUT' }))), ms);
    const onAbort = () => done(() => reject(new Error('the read was cancelled')));
    const done = (settle: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    if (signal.aborted) return onAbort();
    // A read has hundreds of calls in flight on one signal, each listening for its abort.
    setMaxListeners(0, signal);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then((value) => done(() => resolve(value)), (error: unknown) => done(() => reject(error)));
  });
}

const call = <T>(signal: AbortSignal, what: string, start: (callback: (error: unknown, value: T) => void) => void) =>
  withDeadline(new Promise<T>((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value)))), signal, CALL_TIMEOUT_MS, what);

/** The children of `path` (null: the node is gone), watched by `watcher` when given. */
export async function childrenOf(client: Client, path: string, signal: AbortSignal, watcher?: Watcher): Promise<string[] | null> {
  try {
    return await call<string[]>(signal, `children of ${path}`, (cb) => (watcher ? client.getChildren(path, watcher, (e, c) => cb(e, c)) : client.getChildren(path, (e, c) => cb(e, c))));
  } catch (error) {
    if (isNoNode(error)) return null;
    throw error;
  }
}

/** Watches for `path` to be created (a configured path no lock has made yet); true when it exists after all. */
export async function watchCreation(client: Client, path: string, signal: AbortSignal, watcher: Watcher): Promise<boolean> {
  const stat = await call<Stat | undefined>(signal, `whether ${path} exists`, (cb) => client.exists(path, watcher, (e, s) => cb(e, s)));
  return stat !== undefined && stat !== null;
}

/** The data and stat of `path` (null: the node is gone). */
export async function dataOf(client: Client, path: string, signal: AbortSignal): Promise<NodeData | null> {
  try {
    return await call<NodeData>(signal, `data of ${path}`, (cb) => client.getData(path, (e, data, stat) => cb(e, { data: data ?? Buffer.alloc(0), stat })));
  } catch (error) {
    if (isNoNode(error)) return null;
    throw error;
  }
}

/**
 * A multi-op that deletes `path` only if its version is still `version` (a check, then the
 * delete), to which more ops may be added. node-zookeeper-client reads a version of 0, which
 * every node has until its data is first set, as "any version" (`version || -1`): the version
 * is set again on both ops as given.
 */
export function deleteAtVersion(client: Client, path: string, version: number): Transaction {
  const transaction = client.transaction().check(path, version).remove(path, version);
  for (const op of (transaction as unknown as { ops: { version?: number }[] }).ops) if (op.version !== undefined) op.version = version;
  return transaction;
}

/** A multi-op's commit within the call deadline. */
export const commit = (transaction: Transaction, signal: AbortSignal, what: string) =>
  withDeadline(new Promise<void>((resolve, reject) => transaction.commit((error) => (error ? reject(error) : resolve()))), signal, CALL_TIMEOUT_MS, what);

/** "ZooKeeper at host:port, ...": who a message about this source's failures names. */
export function targetOf(config: Pick<ZookeeperSourceConfig, 'connect'>): string {
  return `ZooKeeper at ${serversOf(config).join(', ')}`;
}

/** A ZooKeeper error in words a person on call reads at once. */
export function zookeeperProblem(error: unknown, target: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as Error | null)?.message ?? error);
  if (code === zookeeper.Exception.NO_AUTH) return `${target} refused to show a node: no permission (check the source's digest, and the node's ACL)`;
  if (code === zookeeper.Exception.AUTH_FAILED) return `${target} refused the digest credentials`;
  if (code === zookeeper.Exception.CONNECTION_LOSS || code === zookeeper.Exception.SESSION_EXPIRED) return `${target} closed the connection`;
  if (code === 'ETIMEDOUT' || /timed? ?out/i.test(message)) return `${target} did not answer in time`;
  if (/ECONNREFUSED/.test(message)) return `${target} refused the connection (is the server running, on that port?)`;
  if (message === 'the read was cancelled') return message;
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return `${target} gave an answer that could not be read (is that its client port?)`;
  return `${target}: ${message.slice(0, 200)}`;
}
