import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { StaticTokenStore, startTokenRotation } from './auth';
import { ConfigError, loadConfig, type Config } from './config';
import { createStore } from './db/store';
import { trackConnections } from './http/connections';
import { SERVER_OPTIONS, installHttpEdges } from './http/http-edges';
import type { Lifecycle } from './http/lifecycle';
import { createLogger, exitAfterLogFlush, type Logger } from './logger';
import type { MetricsServer } from './metrics';

async function start(config: Config, logger: Logger): Promise<void> {
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception; exiting so the container restarts a clean process');
    exitAfterLogFlush(logger, 1);
  });
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled rejection; exiting so the container restarts a clean process');
    exitAfterLogFlush(logger, 1);
  });

  if (config.tokenSource === 'generated') {
    logger.warn(
      { token: config.authTokens[0] },
      'AUTH_TOKENS and AUTH_TOKENS_FILE are not set: generated this bearer token, valid until the process stops',
    );
  }

  const tokens = new StaticTokenStore(config);
  // Metrics and the shared rate limit load only when configured: prom-client and redis together cost ~33 MiB of
  // memory that a process without them would carry.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const metricsModule = config.metricsPort === 0 ? undefined : (require('./metrics') as typeof import('./metrics'));
  const redisModule = config.redisUrl === undefined ? undefined : (require('./http/rate-limit.redis') as typeof import('./http/rate-limit.redis'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const metrics = metricsModule?.createMetrics();
  const store = createStore(config, logger, { observer: metrics?.store, webhookObserver: metrics?.webhooks });
  await store.open();
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
  const shared = config.redisUrl === undefined ? undefined : redisModule?.createSharedRateLimit(config.redisUrl, config.redisKeyPrefix, logger);

  const lifecycle: Lifecycle = { shuttingDown: false };
  const app = createApp({
    config,
    logger,
    plants: store.plants,
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
    },
    app,
  );

  installHttpEdges(server, logger);
  const connections = trackConnections(server, config.maxConnections);

  // Responses not yet started when a drain begins are told to close their connection.
  const inFlight = new Set<http.ServerResponse>();
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (lifecycle.shuttingDown) res.setHeader('Connection', 'close');
    inFlight.add(res);
    // 'close' comes once per response: `on` spares the once-wrapper, as in the request log.
    res.on('close', () => inFlight.delete(res));
  });

  // A deep accept queue (the kernel caps it at net.core.somaxconn): a burst of connections waits to be
  // accepted, and then maybe shed with a 503, instead of having its SYNs dropped and retried a second later.
  let stopTokenRotation = (): void => undefined;
  server.listen({ port: config.port, host: config.host, backlog: 4096 }, () => {
    const { address, port } = server.address() as AddressInfo;
    logger.info({ address, port }, 'listening');
    stopTokenRotation = startTokenRotation(tokens, logger);
    store.start();
    store.webhooks?.start();
    backups?.start();
  });
  let metricsServer: MetricsServer | undefined;
  if (metrics !== undefined && metricsModule !== undefined) {
    metricsModule.serveMetrics(metrics.registry, { host: config.metricsHost, port: config.metricsPort }).then(
      (started) => {
        metricsServer = started;
        logger.info({ url: started.url }, 'metrics listening');
      },
      (err: unknown) => {
        logger.fatal({ err }, `cannot serve metrics on ${config.metricsHost}:${config.metricsPort}: ${(err as Error).message}`);
        exitAfterLogFlush(logger, 1);
      },
    );
  }

  const shutdown = (signal: NodeJS.Signals) => {
    if (lifecycle.shuttingDown) return;
    lifecycle.shuttingDown = true;
    stopTokenRotation();
    logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: readiness off, draining in-flight requests');
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    // Keep-alive sockets turn idle as their last response ends; close each as soon as it does.
    const closeIdle = setInterval(() => server.closeIdleConnections(), 50);
    // Webhook attempts in flight get the same drain time; their outcomes are written before the database closes.
    const webhooksStopped = store.webhooks?.stop(config.shutdownTimeoutMs) ?? Promise.resolve();
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
        exitAfterLogFlush(logger, code);
      };
      Promise.all([webhooksStopped, backupsStopped])
        .then(() => Promise.all([store.close(), shared?.close()]))
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
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

function main(): void {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`plant-store: ${error.message}\n`);
    process.exit(1);
  }
  const logger = createLogger(config);
  start(config, logger).catch((err: unknown) => {
    logger.fatal({ err }, `cannot start: ${(err as Error).message}`);
    exitAfterLogFlush(logger, 1);
  });
}

main();
