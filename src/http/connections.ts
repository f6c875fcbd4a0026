import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * The server's connections and the responses in progress on them, the one in-flight tracker: a cap on how many
 * connections are open (past it Node closes a new one on accept, before reading a byte), and at the drain,
 * `Connection: close` on every response not yet started and closing the connections that hold no response worth
 * finishing. It never closes a connection whose response is still being made.
 */
export function trackConnections(server: http.Server, maxConnections: number): { drain: () => void } {
  server.maxConnections = maxConnections;
  const open = new Set<Socket>();
  // Connections with a response started and not yet finished, with that response: the only ones a drain waits for.
  const working = new Map<Socket, http.ServerResponse>();
  let draining = false;

  // Ends the connection once what was written is flushed; a client still trickling a body is not waited for.
  const closeWhenFlushed = (socket: Socket) => {
    socket.once('finish', () => socket.destroy());
    socket.end();
  };

  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      working.delete(socket);
    });
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    if (draining) res.setHeader('Connection', 'close');
    working.set(socket, res);
    res.on('finish', () => {
      working.delete(socket);
      if (draining) closeWhenFlushed(socket);
    });
  });

  return {
    drain: () => {
      draining = true;
      for (const res of working.values()) if (!res.headersSent) res.setHeader('Connection', 'close');
      // Idle keep-alive connections, a slowloris still sending headers, and a client sending a body after
      // its answer (a 401 before the body was read): none has a request in progress worth finishing.
      for (const socket of open) if (!working.has(socket)) closeWhenFlushed(socket);
    },
  };
}
