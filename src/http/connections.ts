import type http from 'node:http';
import type { Socket } from 'node:net';

// A connection idle for less is not evicted: Node tells a request only once it has read it, and a turn of the
// event loop accepts before it reads, so a client between its answer and its next request, or a new connection
// whose request waits unread, looks idle while its request is already on its way.
const MIN_IDLE_MS = 1000;

// The response in progress on a connection, on its socket (as Node keeps its own `_httpMessage`).
const RESPONSE = Symbol('response in progress');
type Tracked = Socket & { [RESPONSE]?: http.ServerResponse };

/**
 * The server's connections and the responses in progress on them, the one in-flight tracker: a cap on how many
 * connections are open, and at the drain, `Connection: close` on every response not yet started and closing the
 * connections that hold no response worth finishing. It never closes a connection whose response is still being
 * made.
 *
 * At the cap a new connection takes the place of the longest-idle one, as nginx does when it runs out of
 * connections: idle keep-alive connections cost a descriptor each and answer nobody, so 1,000 of them must
 * not lock out a create. Only when every connection has a request in progress is the new one closed unanswered.
 * Idle means no request in progress as Node sees it, for at least MIN_IDLE_MS: since accept, or since the last
 * response finished. A client still sending its headers counts as idle (Node tells nothing before the headers
 * are complete), so a slowloris flood is evicted too; HEADERS_TIMEOUT_MS bounds those anyway.
 */
export function trackConnections(server: http.Server, maxConnections: number): { drain: () => void } {
  const open = new Set<Socket>();
  // Connections with a response started and not yet finished: the only ones a drain waits for, never evicted.
  // A Set of the sockets, each holding its response itself: a Map to the responses would hold short-lived
  // objects in a long-lived table, and the scavenges promoted about a third of all a create allocates
  // (docs/performance/memory.md).
  const working = new Set<Tracked>();
  // The others, in the order they turned idle (a Set iterates in insertion order): the first is the longest idle.
  const idle = new Set<Socket>();
  const idleSince = new WeakMap<Socket, number>();
  let draining = false;

  // Ends the connection once what was written is flushed; a client still trickling a body is not waited for.
  const closeWhenFlushed = (socket: Socket) => {
    socket.once('finish', () => socket.destroy());
    socket.end();
  };

  server.on('connection', (socket: Socket) => {
    open.add(socket);
    idle.add(socket);
    idleSince.set(socket, performance.now());
    socket.once('close', () => {
      open.delete(socket);
      working.delete(socket);
      idle.delete(socket);
      idleSince.delete(socket);
    });
    if (open.size <= maxConnections) return;
    // The new connection is the last of `idle`: the first is another one unless every other is working, or
    // idle for too short a time to tell idle from not yet read; then the new one is the one closed.
    const longestIdle = idle.values().next().value as Socket;
    const victim = (idleSince.get(longestIdle) ?? 0) <= performance.now() - MIN_IDLE_MS ? longestIdle : socket;
    // Out of the count now: 'close' comes a tick later, and another accept in this one needs the right count.
    idle.delete(victim);
    open.delete(victim);
    victim.destroy();
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket as Tracked;
    if (draining) res.setHeader('Connection', 'close');
    working.add(socket);
    socket[RESPONSE] = res;
    idle.delete(socket);
    res.on('finish', () => {
      working.delete(socket);
      if (socket[RESPONSE] === res) socket[RESPONSE] = undefined;
      if (draining) closeWhenFlushed(socket);
      else if (!socket.destroyed) {
        idle.add(socket);
        idleSince.set(socket, performance.now());
      }
    });
  });

  return {
    drain: () => {
      draining = true;
      for (const socket of working) {
        const res = socket[RESPONSE];
        if (res !== undefined && !res.headersSent) res.setHeader('Connection', 'close');
      }
      // Idle keep-alive connections, a slowloris still sending headers, and a client sending a body after
      // its answer (a 401 before the body was read): none has a request in progress worth finishing.
      for (const socket of open) if (!working.has(socket)) closeWhenFlushed(socket);
    },
  };
}
