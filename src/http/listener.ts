/**
 * The public listener as two parts of the service. `listener` opens the socket (timeouts, connection cap,
 * backlog) and, stopped late in the drain, waits for the connections to finish until the deadline. `intake`, the
 * last part started and so the first stopped, stops accepting and closes idle keep-alive connections: requests in
 * flight finish while the background work stops. It never closes a connection whose response is in progress
 * before the deadline.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Config } from '../config';
import { StartError, type Part } from '../lifecycle';
import type { Logger } from '../logger';
import { trackConnections } from './connections';
import { requestClasses } from './request-classes';
import { SERVER_OPTIONS, installHttpEdges } from './http-edges';
import { connectionCap, type ConnectionCap } from './open-files';

type ListenerConfig = Pick<
  Config,
  'port' | 'host' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'maxConnections' | 'database' | 'databasePoolSize' | 'webhooks'
>;

export type PublicListener = {
  listener: Part<AddressInfo>;
  intake: Part;
  /** True once the drain's deadline came with connections still open (they were closed then). */
  timedOut: () => boolean;
  /** The connection cap and the open-file limit it came from, once listening. */
  cap: () => ConnectionCap | undefined;
};

function createServer(app: Express, config: ListenerConfig): http.Server {
  return http.createServer(
    {
      // Against slow clients: whole headers within headersTimeout, the whole request within requestTimeout.
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      // Longer than a proxy's idle upstream timeout (nginx 60 s), so the proxy closes first and never
      // sends on a socket we are closing.
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1000,
      ...SERVER_OPTIONS,
      // Each request built with Express's prototypes in place: one hidden class for all (src/http/request-classes.ts).
      ...requestClasses(app),
    },
    app,
  );
}

function listen(server: http.Server, config: Pick<Config, 'port' | 'host'>): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue (the kernel caps it at net.core.somaxconn): a burst of connections waits to be
    // accepted, and then maybe shed with a 503, instead of having its SYNs dropped and retried a second later.
    server.listen({ port: config.port, host: config.host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

// Called once the store and the metrics listener are open: what is left of the open-file limit is the connections' room.
function capConnections(config: ListenerConfig, reservedFiles: number, logger: Logger): ConnectionCap {
  let cap: ConnectionCap;
  try {
    cap = connectionCap(config, reservedFiles);
  } catch (err) {
    throw new StartError((err as Error).message, { cause: err });
  }
  if (cap.lowered !== undefined) {
    logger.warn({ maxConnections: cap.maxConnections, configured: cap.lowered, openFileLimit: cap.openFileLimit }, 'MAX_CONNECTIONS is more than the open-file limit leaves room for; lowered');
  }
  return cap;
}

/**
 * `reservedFiles`: descriptors the parts opened before it may still open (the metrics listener's connections).
 * `line`: the start line's message (a worker's says `worker listening`; its supervisor logs `listening`).
 */
export function publicListener(app: Express, config: ListenerConfig, logger: Logger, reservedFiles: number, line = 'listening'): PublicListener {
  const server = createServer(app, config);
  installHttpEdges(server, logger);
  let connections: { drain: () => void } | undefined;
  let closing: Promise<void> | undefined;
  let closeIdle: NodeJS.Timeout | undefined;
  let draining = false;
  let timedOut = false;
  let cap: ConnectionCap | undefined;
  const close = () => (closing ??= new Promise((resolve) => server.close(() => resolve())));

  const start = async (): Promise<AddressInfo> => {
    cap = capConnections(config, reservedFiles, logger);
    connections = trackConnections(server, cap.maxConnections);
    const address = await listen(server, config);
    logger.info({ address: address.address, port: address.port, maxConnections: cap.maxConnections, openFileLimit: cap.openFileLimit }, line);
    return address;
  };

  // Closed, or at the deadline every connection still open closed (a failed start passes a deadline of now).
  const stop = (deadline: number) =>
    new Promise<void>((resolve) => {
      const finish = () => {
        clearInterval(closeIdle);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        if (draining) logger.warn('drain timed out; closing the connections still open');
        timedOut = true;
        server.closeAllConnections();
        finish();
      }, deadline - Date.now());
      void close().then(finish);
    });

  const intake: Part = {
    name: 'intake',
    start: () => undefined,
    stop: () => {
      draining = true;
      // Keep-alive sockets turn idle as their last response ends; close each as soon as it does.
      closeIdle = setInterval(() => server.closeIdleConnections(), 50);
      void close();
      server.closeIdleConnections();
      connections?.drain();
    },
  };
  return { listener: { name: 'listener', start, stop }, intake, timedOut: () => timedOut, cap: () => cap };
}
