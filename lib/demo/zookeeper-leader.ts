// A leader elected on ZooKeeper as Apache Curator's LeaderLatch elects one, for the demo's
// fleet (`npm run demo -- --backends zookeeper`): each server makes an EPHEMERAL_SEQUENTIAL
// node "_c_<uuid>-latch-<sequence>" under the election's path, with its name as data; the
// lowest sequence leads; every other watches the one before it. Leasehold reads it as it reads
// a real LeaderLatch (lib/sources/zookeeper). Like Curator's default policy, a server stops
// leading the moment its connection is lost, not only once its session has expired; unlike
// Curator, the leader also watches its own node, so a force-release is noticed at once.
import { randomUUID } from 'node:crypto';
import zookeeper, { type Client } from 'node-zookeeper-client';

const isNoNode = (error: unknown) => (error as { code?: number } | null)?.code === zookeeper.Exception.NO_NODE;

export type ZookeeperLeaderOptions = {
  connect: string;
  /** The election's znode; made (with its parents) if missing. */
  path: string;
  /** The participant id, written as the node's data. */
  id: string;
  sessionTimeoutMs: number;
  /** Runs while this server leads: `leading` aborts when it stops; `token` is the node's czxid. */
  onStartedLeading: (leading: AbortSignal, token: string) => Promise<void>;
  onStoppedLeading: () => void;
  onError: (error: unknown) => void;
};

const LATCH = 'latch-';
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
/** `promise`, or (resolved) once `signal` aborts; its listener is removed either way. */
function orAbort<T>(signal: AbortSignal, promise: Promise<T>): Promise<T | void> {
  return new Promise<T | void>((resolve, reject) => {
    const onAbort = () => resolve();
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    const done = () => signal.removeEventListener('abort', onAbort);
    promise.then((value) => (done(), resolve(value)), (error: unknown) => (done(), reject(error)));
  });
}

/** A call's answer; an error once `signal` aborts (a call on a lost connection waits for the next one). */
async function callUntil<T>(signal: AbortSignal, start: (callback: (error: unknown, value: T) => void) => void): Promise<T> {
  const call = new Promise<T>((resolve, reject) => start((error, value) => (error ? reject(error as Error) : resolve(value))));
  const answer = await orAbort(signal, call.then((value) => ({ value })));
  if (!answer) throw new Error('stopped taking part');
  return answer.value;
}

/** Children in the order Curator serves them: by what follows the last "latch-", then by name. */
export function latchOrder(children: readonly string[]): string[] {
  const key = (name: string) => name.slice(name.lastIndexOf(LATCH) + LATCH.length);
  return children.filter((name) => name.includes(LATCH)).sort((a, b) => (key(a) === key(b) ? (a < b ? -1 : 1) : key(a) < key(b) ? -1 : 1));
}

/** Resolves when `path` changes or goes (an exists watch), or at once when it is not there. */
function changeOf(client: Client, path: string): Promise<void> {
  return new Promise<void>((resolve) => client.exists(path, () => resolve(), (error, stat) => (error || !stat ? resolve() : undefined)));
}

/** One session's part in the election: until the session is lost, the node goes, or `signal` aborts. */
async function takePart(client: Client, options: ZookeeperLeaderOptions, signal: AbortSignal) {
  const call = <T>(start: (callback: (error: unknown, value: T) => void) => void) => callUntil<T>(signal, start);
  await call<string>((cb) => client.mkdirp(options.path, (e, p) => cb(e, p)));
  const ours = await call<string>((cb) => client.create(`${options.path}/_c_${randomUUID()}-${LATCH}`, Buffer.from(options.id), zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, (e, p) => cb(e, p)));
  const name = ours.slice(options.path.length + 1);
  try {
    while (!signal.aborted) {
      const order = latchOrder(await call<string[]>((cb) => client.getChildren(options.path, (e, c) => cb(e, c))));
      const index = order.indexOf(name);
      if (index < 0) return; // our node went (forced, or the session ended): take part again
      const changed = changeOf(client, index === 0 ? ours : `${options.path}/${order[index - 1]}`);
      if (index > 0) {
        await orAbort(signal, changed);
        continue;
      }
      const data = await call<{ stat: { czxid: Buffer } } | null>((cb) =>
        client.getData(ours, (e, _data, stat) => (isNoNode(e) ? cb(null, null) : cb(e, { stat: stat as unknown as { czxid: Buffer } }))),
      );
      if (!data) return; // forced out between the two reads
      const leading = new AbortController();
      const work = options.onStartedLeading(AbortSignal.any([leading.signal, signal]), data.stat.czxid.readBigUInt64BE(0).toString());
      await orAbort(signal, Promise.race([changed, work])).catch(() => {}); // its error is told below
      leading.abort();
      await work.catch(options.onError);
      options.onStoppedLeading();
      // Our node went, or the work ended on its own: take part again, at the back of the queue.
      return;
    }
  } finally {
    // Stepping down: the next in line leads at once, not after the session's timeout.
    await callUntil<void>(AbortSignal.timeout(2_000), (cb) => client.remove(ours, -1, (e) => cb(e, undefined))).catch(() => {});
  }
}

/** Takes part in the election until `signal` aborts, with a new session whenever one is lost. */
export async function runZookeeperLeader(options: ZookeeperLeaderOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const client = zookeeper.createClient(options.connect, { sessionTimeout: options.sessionTimeoutMs, spinDelay: 500 });
    const lost = new AbortController();
    let probe: NodeJS.Timeout | undefined;
    for (const state of ['disconnected', 'expired', 'authenticationFailed'] as const) client.once(state, () => lost.abort());
    try {
      client.connect();
      const taking = AbortSignal.any([signal, lost.signal, AbortSignal.timeout(options.sessionTimeoutMs)]);
      const connected = await orAbort(taking, new Promise<boolean>((resolve) => client.once('connected', () => resolve(true))));
      // The client notices a silent network loss only when TCP gives up (minutes): a read every
      // third of the session's timeout that goes unanswered for two thirds of it counts as lost,
      // as ZooKeeper's own clients count it, before the server expires the session.
      probe = setInterval(() => {
        const late = setTimeout(() => lost.abort(), (options.sessionTimeoutMs * 2) / 3);
        client.exists('/', (error) => (clearTimeout(late), error && lost.abort()));
      }, options.sessionTimeoutMs / 3);
      if (connected) await takePart(client, options, AbortSignal.any([signal, lost.signal]));
    } catch (error) {
      if (!signal.aborted && !lost.signal.aborted) options.onError(error);
    } finally {
      clearInterval(probe);
      client.close();
    }
    await sleep(500, signal);
  }
}
