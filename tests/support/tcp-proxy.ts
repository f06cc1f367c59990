// A TCP proxy in front of a real server, for partition tests: while `partitioned`, it
// accepts connections and swallows every byte in both directions, the way a network that
// drops packets does; with a delay, every byte arrives that much later, in order (a slow
// link). Nothing is simulated beyond the network: the server is real.
import net from 'node:net';

export type TcpProxy = {
  port: number;
  partition(on: boolean): void;
  /** Every chunk, both ways, is passed on this many milliseconds after it arrived (0: at once). */
  delay(ms: number): void;
  /** Drops every open connection (the clients see them reset and reconnect). */
  reset(): void;
  /** Chunks the clients have sent so far: on loopback, one per request written (a pipeline is one). */
  written(): number;
  close(): Promise<void>;
};

/** Listens on `listenPort` (default: any free port) and forwards to targetHost:targetPort. */
export async function startTcpProxy(targetHost: string, targetPort: number, listenPort = 0): Promise<TcpProxy> {
  let partitioned = false;
  let delayMs = 0;
  let written = 0;
  const pass = (to: net.Socket, chunk: Buffer) => {
    if (partitioned) return;
    // Timers of one delay fire in the order they were set: the bytes keep their order.
    if (delayMs > 0) setTimeout(() => !to.destroyed && to.write(chunk), delayMs);
    else to.write(chunk);
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      written += 1;
      pass(upstream, chunk);
    });
    upstream.on('data', (chunk: Buffer) => pass(client, chunk));
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    partition(on) {
      partitioned = on;
    },
    delay(ms) {
      delayMs = ms;
    },
    reset() {
      for (const socket of sockets) socket.destroy();
    },
    written: () => written,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
