/**
 * The service as one object: startService wires the store, the app and its optional parts, listens, starts the
 * background work, and owns the one drain. The process (server.ts) and the tests (tests/helpers/test-app.ts)
 * start it the same way. It reads no environment, installs no process handler and never exits the process.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { StaticTokenStore, startTokenRotation } from './auth';
import type { Config } from './config';
import { trackConnections } from './http/connections';
import { expressShapes } from './http/express-shapes';
import { connectionCap, type ConnectionCap } from './http/open-files';
import { SERVER_OPTIONS, installHttpEdges } from './http/http-edges';
import type { Lifecycle } from './lifecycle';
import type { Logger } from './logger';
import type { MetricsServer } from './metrics';
import { createStore, type Store, type StoreHooks } from './store';

export type Service = {
  /** The public listener, `http://host:port`. */
  url: string;
  address: AddressInfo;
  /** The scrape URL when METRICS_PORT is not 0. */
  metricsUrl?: string;
  lifecycle: Lifecycle;
  /**
   * Readiness off, in-flight requests finished (up to SHUTDOWN_TIMEOUT_MS), webhook attempts settled, then the
   * store and Redis closed. Resolves with the exit code the drain earned: 0, or 1 when it timed out. Idempotent.
   */
  drain: (signal?: NodeJS.Signals) => Promise<number>;
};

export type ServiceOptions = {
  /** Builds the store instead of createStore; tests use it to run the app on a connection they provoke faults on. */
  store?: (hooks: StoreHooks) => Store;
};

/** A start failure whose message already says what failed (the operator reads it as is). */
export class StartError extends Error {}

function listen(server: http.Server, config: Pick<Config, 'port' | 'host'>): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue (the kernel caps it at net.core.somaxconn): a burst of connections waits to be
    // accepted, and then maybe shed with a 503, instead of having its SYNs dropped and retried a second later.
    server.listen({ port: config.port, host: config.host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<Service> {
  if (config.tokenSource === 'generated') {
    logger.warn(
      { token: config.authTokens[0] },
      'AUTH_TOKENS and AUTH_TOKENS_FILE are not set: generated this bearer token, valid until the process stops',
    );
  }
  const tokens = new StaticTokenStore(config);

  // Metrics and the shared rate limit load only when configured: a process without them does not carry the
  // memory prom-client and redis take.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const metricsModule = config.metricsPort === 0 ? undefined : (require('./metrics') as typeof import('./metrics'));
  const redisModule = config.redisUrl === undefined ? undefined : (require('./http/rate-limit.redis') as typeof import('./http/rate-limit.redis'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const metrics = metricsModule?.createMetrics();
  let metricsServer: MetricsServer | undefined;
  if (metrics !== undefined && metricsModule !== undefined) {
    try {
      metricsServer = await metricsModule.serveMetrics(metrics.registry, { host: config.metricsHost, port: config.metricsPort });
    } catch (err) {
      // The message names METRICS_PORT and how to change it or turn metrics off (src/metrics/metrics.server.ts).
      throw new StartError((err as Error).message, { cause: err });
    }
    logger.info({ url: metricsServer.url }, 'metrics listening');
  }

  const hooks: StoreHooks = { observer: metrics?.store, webhookObserver: metrics?.webhooks, feedObserver: metrics?.feed };
  let store: Store;
  try {
    store = options.store === undefined ? createStore(config, logger, hooks) : options.store(hooks);
  } catch (err) {
    await metricsServer?.close();
    throw err;
  }
  const shared = config.redisUrl === undefined ? undefined : redisModule?.createSharedRateLimit(config.redisUrl, config.redisKeyPrefix, logger);
  // Scheduled backups of the SQLite store (BACKUP_DIR); loaded only when configured.
  const backups =
    config.backup === undefined || config.database.dialect !== 'sqlite'
      ? undefined
      : // eslint-disable-next-line @typescript-eslint/no-require-imports
        new (require('./backup/scheduler') as typeof import('./backup/scheduler')).BackupScheduler(
          config.database.path,
          config.backup,
          config.databaseBusyTimeoutMs,
          logger,
          metrics?.backups,
        );

  const lifecycle: Lifecycle = { shuttingDown: false };
  const app = createApp({
    config,
    logger,
    plants: store.plants,
    feed: store.feed,
    readiness: store.readiness,
    lifecycle,
    metrics,
    tokens,
    rateLimitStore: shared?.store,
  });
  const server = http.createServer(
    {
      // Against slow clients: whole headers within headersTimeout, the whole request within requestTimeout.
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      // Longer than a proxy's idle upstream timeout (nginx 60 s), so the proxy closes first and never
      // sends on a socket we are closing.
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1000,
      ...SERVER_OPTIONS,
      // Each request built with Express's prototypes in place: one hidden class for all (src/http/express-shapes.ts).
      ...expressShapes(app),
    },
    app,
  );
  installHttpEdges(server, logger);
  // The store and the metrics listener are open: what is left of the open-file limit is the connections' room.
  let cap: ConnectionCap;
  try {
    cap = connectionCap(config, metricsModule === undefined ? 0 : metricsModule.METRICS_MAX_CONNECTIONS);
  } catch (err) {
    await Promise.all([store.close(), shared?.close(), metricsServer?.close()]);
    throw new StartError((err as Error).message, { cause: err });
  }
  if (cap.lowered !== undefined) {
    logger.warn({ maxConnections: cap.maxConnections, configured: cap.lowered, openFileLimit: cap.openFileLimit }, 'MAX_CONNECTIONS is more than the open-file limit leaves room for; lowered');
  }
  const connections = trackConnections(server, cap.maxConnections);

  try {
    await listen(server, config);
  } catch (err) {
    await Promise.all([store.close(), shared?.close(), metricsServer?.close()]);
    throw err;
  }
  const address = server.address() as AddressInfo;
  logger.info({ address: address.address, port: address.port, maxConnections: cap.maxConnections, openFileLimit: cap.openFileLimit }, 'listening');
  // Migrating after listen (PostgreSQL; SQLite has migrated in createStore): a replica waiting for another's
  // migration lock is alive (/healthz 200) and unready (/readyz 503) meanwhile, instead of silent until a
  // liveness probe has it killed.
  try {
    await store.open();
  } catch (err) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await Promise.all([store.close(), shared?.close(), metricsServer?.close()]);
    throw err;
  }
  // Background work starts after the listener and stops in the drain, in the reverse order.
  const stopTokenRotation = startTokenRotation(tokens, logger);
  store.start();
  store.feed.start();
  store.webhooks?.start();
  backups?.start();

  let drained: Promise<number> | undefined;
  const drain = (signal?: NodeJS.Signals): Promise<number> => {
    drained ??= drainNow(signal);
    return drained;
  };
  const opened = store;
  const drainNow = (signal: NodeJS.Signals | undefined) =>
    new Promise<number>((resolve) => {
      lifecycle.shuttingDown = true;
      stopTokenRotation();
      // Change streams end at once: their clients reconnect to another replica, and none holds the drain.
      opened.feed.stop();
      logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: readiness off, draining in-flight requests');
      // Keep-alive sockets turn idle as their last response ends; close each as soon as it does.
      const closeIdle = setInterval(() => server.closeIdleConnections(), 50);
      // Webhook attempts in flight get the same drain time; their outcomes are written before the database closes.
      const webhooksStopped = opened.webhooks?.stop(config.shutdownTimeoutMs) ?? Promise.resolve();
      // A backup in progress stops at its next step and removes its temporary file.
      const backupsStopped = backups?.stop() ?? Promise.resolve();
      let finishing = false;
      const finish = (code: number) => {
        if (finishing) return;
        finishing = true;
        clearInterval(closeIdle);
        clearTimeout(deadline);
        void metricsServer?.close();
        const stopped = () => {
          logger.info({ code }, 'stopped');
          resolve(code);
        };
        Promise.all([webhooksStopped, backupsStopped])
          .then(() => Promise.all([opened.close(), shared?.close()]))
          .then(stopped, (err: unknown) => {
            logger.warn({ err }, 'closing the store or Redis failed');
            stopped();
          });
      };
      const deadline = setTimeout(() => {
        logger.warn('drain timed out; closing the connections still open');
        server.closeAllConnections();
        finish(1);
      }, config.shutdownTimeoutMs);
      server.close(() => finish(0));
      server.closeIdleConnections();
      connections.drain();
    });

  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, address, metricsUrl: metricsServer?.url, lifecycle, drain };
}
