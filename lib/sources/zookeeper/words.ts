// The server's own status from its four-letter words (srvr, mntr), where its
// 4lw.commands.whitelist allows them: mode (standalone, leader, follower), last zxid, request
// latency and outstanding requests. A word the server does not allow is said so, not failed;
// a server that refuses the connection is the source's first clear error.
import net from 'node:net';

const WORD_TIMEOUT_MS = 2_000;
/** An answer longer than this is not a four-letter word's: it is cut and read as far as it goes. */
const MAX_ANSWER_BYTES = 64 * 1024;

export type ServerStatus = {
  server: string;
  mode: string | null;
  zxid: string | null;
  latencyAvgMs: number | null;
  latencyMaxMs: number | null;
  outstanding: number | null;
  connections: number | null;
  nodeCount: number | null;
  version: string | null;
  /** Why the words could not be read (not allowed by the server's whitelist, an answer not a server's), or null. */
  problem: string | null;
};

/** Sends one four-letter word and reads the answer until the server closes. Rejects with the socket's error. */
export function fourLetterWord(server: string, word: string, signal: AbortSignal): Promise<string> {
  const colon = server.lastIndexOf(':');
  const host = server.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(server.slice(colon + 1));
  if (signal.aborted) return Promise.reject(new Error('the read was cancelled'));
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: Error | null) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if (error) reject(error);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onAbort = () => finish(new Error('the read was cancelled'));
    const timer = setTimeout(() => finish(Object.assign(new Error(`timed out: ${word}`), { code: 'ETIMEDOUT' })), WORD_TIMEOUT_MS);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('connect', () => socket.end(word));
    socket.on('data', (chunk: Buffer) => {
      if (size >= MAX_ANSWER_BYTES) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_ANSWER_BYTES) finish(null);
    });
    socket.on('end', () => finish(null));
    socket.on('error', (error) => finish(error));
  });
}

const NOT_ALLOWED = /is not executed because it is not in the whitelist/;

/** The fields of a srvr answer ("Mode: standalone", "Zxid: 0x1a"...), and of mntr where it was allowed. */
export function parseStatus(server: string, srvr: string, mntr: string | null): ServerStatus {
  const line = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(srvr)?.[1]?.trim() ?? null;
  const metric = (name: string) => {
    const value = mntr && !NOT_ALLOWED.test(mntr) ? new RegExp(`^zk_${name}\\t(\\S+)$`, 'm').exec(mntr)?.[1] : undefined;
    return value === undefined || !Number.isFinite(Number(value)) ? null : Number(value);
  };
  const number = (text: string | null) => (text === null || !Number.isFinite(Number(text)) ? null : Number(text));
  if (NOT_ALLOWED.test(srvr)) {
    return { server, mode: null, zxid: null, latencyAvgMs: null, latencyMaxMs: null, outstanding: null, connections: null, nodeCount: null, version: null, problem: 'the server does not allow the four-letter word srvr (4lw.commands.whitelist)' };
  }
  const mode = line('Mode');
  const latency = line('Latency min/avg/max')?.split('/') ?? [];
  return {
    server,
    mode: mode?.slice(0, 40) ?? null,
    zxid: line('Zxid')?.slice(0, 40) ?? null,
    latencyAvgMs: metric('avg_latency') ?? number(latency[1] ?? null),
    latencyMaxMs: metric('max_latency') ?? number(latency[2] ?? null),
    outstanding: metric('outstanding_requests') ?? number(line('Outstanding')),
    connections: metric('num_alive_connections') ?? number(line('Connections')),
    nodeCount: metric('znode_count') ?? number(line('Node count')),
    version: line('Zookeeper version')?.split(/[-,]/)[0]?.slice(0, 40) ?? null,
    problem: mode === null ? 'the answer to srvr is not a ZooKeeper server\'s' : null,
  };
}

/** Each server's status; a server that cannot be reached rejects with its socket error. */
export async function serverStatus(server: string, signal: AbortSignal): Promise<ServerStatus> {
  const srvr = await fourLetterWord(server, 'srvr', signal);
  const mntr = NOT_ALLOWED.test(srvr) ? null : await fourLetterWord(server, 'mntr', signal).catch(() => null);
  return parseStatus(server, srvr, mntr);
}
