import net from 'node:net';

export type TcpProxy = {
  port: number;
  /** Closes every connection and refuses new ones: PostgreSQL is gone. */
  cut: () => Promise<void>;
  /** Keeps every connection open but forwards nothing, and accepts new ones that never answer: a network black hole. */
  stall: () => void;
  /**
   * The next `count` answers never arrive: each request goes through whole, and its connection is cut (both sides)
   * as the first bytes of the answer come back, so the server has done its work and the client gets nothing.
   */
  loseAnswers: (count?: number) => void;
  /** Forwards again on the same port. */
  restore: () => Promise<void>;
  close: () => Promise<void>;
};

/** A TCP proxy on 127.0.0.1 in front of host:port, which a test cuts and restores; the server behind it is never touched. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  let losing = 0;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (stalled) return;
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (!stalled) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (losing > 0) {
        losing -= 1;
        upstream.destroy();
        client.destroy();
      } else if (!stalled) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  return {
    port,
    cut: async () => {
      const closed = stopListening();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    stall: () => {
      stalled = true;
    },
    loseAnswers: (count = 1) => {
      losing = count;
    },
    restore: async () => {
      stalled = false;
      for (const socket of sockets) socket.destroy();
      if (!server.listening) await listen(port);
    },
    close: async () => {
      const closed = stopListening();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
