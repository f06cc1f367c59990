// A TCP proxy in front of a real server, for partition tests: while `partitioned`, it
// accepts connections and swallows every byte in both directions, the way a network that
// drops packets does. Nothing is simulated beyond the network: the server is real.
import net from 'node:net';

export type TcpProxy = {
  port: number;
  partition(on: boolean): void;
  /** Drops every open connection (the clients see them reset and reconnect). */
  reset(): void;
  close(): Promise<void>;
};

/** Listens on `listenPort` (default: any free port) and forwards to targetHost:targetPort. */
export async function startTcpProxy(targetHost: string, targetPort: number, listenPort = 0): Promise<TcpProxy> {
  let partitioned = false;
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
    client.on('data', (chunk) => {
      if (!partitioned) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!partitioned) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    partition(on) {
      partitioned = on;
    },
    reset() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
