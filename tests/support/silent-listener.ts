// A loopback listener that accepts connections and never answers: what a frozen or
// misrouted server looks like to a client (the kernel completes the handshake; nothing more).
import net from 'node:net';

export type SilentListener = { port: number; connections(): number; close(): Promise<void> };

export async function startSilentListener(port = 0): Promise<SilentListener> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => accepted,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
