/**
 * The service as one object: startService builds its parts in order (each a name, a start and a stop with a
 * deadline, src/lifecycle.ts), starts each as it is added, and owns the one drain, which stops them in reverse.
 * The process (server.ts) and the tests (tests/helpers/test-app.ts) start it the same way. It reads no
 * environment, installs no process handler and never exits the process.
 */
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { StaticTokenStore, startTokenRotation } from './auth';
import type { BackupSchedule, BackupScheduler } from './backup/scheduler';
import { GENERATED_TOKEN_WARNING, type Config } from './config';
import { publicListener } from './http/listener';
import type { CreditChannel } from './http/rate-limit.credits';
import type { SharedRateLimit } from './http/rate-limit.redis';
import { optional, Parts, StartError, type Lifecycle, type Part } from './lifecycle';
import type { Logger } from './logger';
import type { Metrics, MetricsServer } from './metrics';
import { whileLeading, type MachineCommits, type MachineLeader, type MachineSlots, type Resource, type WriteTurn } from './resource';
import { accessOf, RESOURCES } from './resources';
import { createStore, type Store, type StoreHooks } from './store';

export { StartError } from './lifecycle';
export { loadServiceConfig } from './resources';

export type Service = {
  /** The public listener, `http://host:port`. */
  url: string;
  address: AddressInfo;
  /** The scrape URL when METRICS_PORT is not 0 (and this process is no worker: its supervisor serves it). */
  metricsUrl?: string;
  /** Every series of this process's instruments, as a supervisor merges them; undefined with METRICS_PORT=0. */
  metricsJson: (() => Promise<object[]>) | undefined;
  /** Connections this process holds at most, and the open-file limit that cap came from. */
  connections: { maxConnections: number; openFileLimit: number | undefined };
  lifecycle: Lifecycle;
  /**
   * Readiness off, then every part stopped in reverse within SHUTDOWN_TIMEOUT_MS (or by `deadline`, a Date.now()
   * instant, which a supervisor gives all its workers): the listener stops accepting, background work stops
   * (webhook attempts settled), in-flight requests finish, then Redis, the store and the metrics listener close.
   * Resolves with the exit code the drain earned: 0, or 1 when it timed out. Idempotent.
   */
  drain: (signal?: NodeJS.Signals, deadline?: number) => Promise<number>;
};

export type ServiceOptions = {
  /** Builds the store instead of createStore; tests use it to run the app on a connection they provoke faults on. */
  store?: (hooks: StoreHooks, resources: readonly Resource[]) => Store;
  /** This process is worker n of a supervisor (src/supervisor): its start line says `worker listening`. */
  worker?: number;
  /** A worker's limits held for the whole machine by its supervisor (EVENTS_MAX_STREAMS, a key in flight). */
  machine?: MachineSlots;
  /** A worker's channel to its supervisor's rate-limit credits: the limits count there when REDIS_URL is unset. */
  rateCredits?: CreditChannel;
  /** SQLite at WORKERS above 1: the machine's write turn, held by the supervisor (src/supervisor/write-turn.ts). */
  writeTurn?: WriteTurn;
  /** SQLite at WORKERS above 1: the other workers' commits, told through the supervisor (D11). */
  commits?: MachineCommits;
  /** SQLite at WORKERS above 1: the webhook dispatcher and scheduled backups run once this worker leads (D9). */
  leader?: MachineLeader;
  /**
   * Called once the public listener listens, before PostgreSQL's migrations, as one process logs `listening` then: a
   * worker tells its supervisor, which logs `listening` once every worker does.
   */
  listening?: (service: Pick<Service, 'address' | 'connections' | 'metricsJson'>) => void;
};

type MetricsPart = { instruments: Metrics; server?: MetricsServer; reservedFiles: number };

/* eslint-disable @typescript-eslint/no-require-imports -- optional subsystems load only when configured: a
   process without them does not carry the memory prom-client, redis or a backup scheduler take. */
function metricsListener(config: Config, logger: Logger, worker: number | undefined): Part<MetricsPart> {
  const metrics = require('./metrics') as typeof import('./metrics');
  return {
    name: 'metrics listener',
    start: async () => {
      const instruments = metrics.createMetrics();
      // A worker's instruments are scraped by its supervisor, which serves METRICS_PORT (src/supervisor).
      if (worker !== undefined) return { instruments, reservedFiles: 0 };
      let server: MetricsServer;
      try {
        server = await metrics.serveMetrics(instruments.registry, { host: config.metricsHost, port: config.metricsPort });
      } catch (err) {
        // The message names METRICS_PORT and how to change it or turn metrics off (src/metrics/metrics-listener.ts).
        throw new StartError((err as Error).message, { cause: err });
      }
      logger.info({ url: server.url }, 'metrics listening');
      return { instruments, server, reservedFiles: metrics.METRICS_MAX_CONNECTIONS };
    },
    stop: (_deadline, { server }) => server?.close(),
  };
}

function sharedRateLimit(url: string, config: Config, logger: Logger): Part<SharedRateLimit> {
  const { createSharedRateLimit } = require('./http/rate-limit.redis') as typeof import('./http/rate-limit.redis');
  return { name: 'shared rate limit', start: () => createSharedRateLimit(url, config.redisKeyPrefix, logger), stop: (_deadline, shared) => shared.close() };
}

// Without Redis a worker's limits count in its supervisor, which grants credits (src/http/rate-limit.credits.ts).
function creditRateLimit(channel: CreditChannel | undefined): Omit<SharedRateLimit, 'close'> | undefined {
  if (channel === undefined) return undefined;
  const { createCreditRateLimit } = require('./http/rate-limit.credits') as typeof import('./http/rate-limit.credits');
  return createCreditRateLimit(channel);
}

// The first backup comes one interval after start (with workers: after this worker took the lead); a backup in
// progress stops at its next step in the drain.
function backupScheduler(sqlite: { file: string; schedule: BackupSchedule }, config: Config, logger: Logger, metrics: Metrics | undefined, leader: MachineLeader | undefined): Part<() => BackupScheduler | undefined> {
  const { BackupScheduler } = require('./backup/scheduler') as typeof import('./backup/scheduler');
  const scheduler = new BackupScheduler(sqlite.file, sqlite.schedule, config.databaseBusyTimeoutMs, logger, metrics?.backups);
  return {
    name: 'backups',
    start: () =>
      whileLeading(leader, () => {
        scheduler.start();
        return scheduler;
      }),
    stop: (_deadline, release) => release()?.stop(),
  };
}
/* eslint-enable @typescript-eslint/no-require-imports */

function storePart(config: Config, logger: Logger, hooks: StoreHooks, options: ServiceOptions): Part<Store> {
  return {
    name: 'store',
    start: () => (options.store === undefined ? createStore(config, logger, RESOURCES, hooks) : options.store(hooks, RESOURCES)),
    stop: (_deadline, store) => store.close(),
  };
}

/** Work that runs after the listener, each piece stopped at once in the drain, none waiting for another. */
function background(config: Config, logger: Logger, store: Store, tokens: StaticTokenStore, metrics: Metrics | undefined, leader: MachineLeader | undefined): Part<unknown>[] {
  const backups = config.database.dialect === 'sqlite' && config.backup !== undefined && { file: config.database.path, schedule: config.backup };
  return [
    { name: 'token rotation', start: () => startTokenRotation(tokens, logger), stop: (_deadline, stop) => stop() } satisfies Part<() => void>,
    // PostgreSQL: reconnects and migrates when it was away at start; its close (the store part) ends that.
    { name: 'store reconnect', start: () => store.start() },
    // Each resource's own (a change feed), in the order they are registered.
    ...store.resources.flatMap(({ parts }) => parts.background ?? []),
    // Webhook attempts in flight get the drain's time; their outcomes are written before the store closes.
    { name: 'webhooks', start: () => store.webhooks?.start(), stop: (deadline) => store.webhooks?.stop(Math.max(0, deadline - Date.now())) },
    optional(backups, (sqlite) => backupScheduler(sqlite, config, logger, metrics, leader)),
  ];
}

// A worker's supervisor generated the token and said it once for all of them.
function warnGeneratedToken(config: Config, logger: Logger, worker: number | undefined): void {
  if (config.tokenSource !== 'generated' || worker !== undefined) return;
  logger.warn({ token: config.authTokens[0] }, GENERATED_TOKEN_WARNING);
}

export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<Service> {
  warnGeneratedToken(config, logger, options.worker);
  const access = accessOf(RESOURCES);
  const tokens = new StaticTokenStore(config, access.scopes);
  const lifecycle: Lifecycle = { shuttingDown: false };
  const parts = new Parts((part, err) => logger.warn({ err, part }, `stopping the ${part} failed`));

  // The metrics listener first: a taken METRICS_PORT fails the start with nothing else to undo.
  const metricsPart = await parts.start(optional(config.metricsPort !== 0, () => metricsListener(config, logger, options.worker)));
  const metrics = metricsPart?.instruments;
  const store = await parts.start(storePart(config, logger, { observer: metrics?.store, webhookObserver: metrics?.webhooks, feedObserver: metrics?.feed, machine: options.machine, writeTurn: options.writeTurn, commits: options.commits, leader: options.leader }, options));
  const shared = (await parts.start(optional(config.redisUrl, (url) => sharedRateLimit(url, config, logger)))) ?? creditRateLimit(options.rateCredits);
  const app = createApp({ config, logger, resources: store.resources, access, readiness: store.readiness, lifecycle, metrics, tokens, rateLimitStore: shared?.store, tenantRateLimitStore: shared?.tenantStore });
  const http = publicListener(app, config, logger, metricsPart?.reservedFiles ?? 0, options.worker === undefined ? 'listening' : 'worker listening');
  const address = await parts.start(http.listener);
  const { maxConnections, openFileLimit } = http.cap() ?? { maxConnections: 0, openFileLimit: undefined };
  const metricsJson = metrics && (() => metrics.registry.getMetricsAsJSON());
  options.listening?.({ address, connections: { maxConnections, openFileLimit }, metricsJson });
  // Migrating after listen (PostgreSQL; SQLite has migrated in createStore): a replica waiting for another's
  // migration lock is alive (/healthz 200) and unready (/readyz 503) meanwhile, instead of silent until a
  // liveness probe has it killed.
  await parts.start({ name: 'migrations', start: () => store.open() });
  options.leader?.whenLeading(() => logger.info('leading: the webhook dispatcher, scheduled backups and the prunes run in this worker'));
  await parts.start(parts.together('background', background(config, logger, store, tokens, metrics, options.leader)));
  await parts.start(http.intake);

  const drain = async (signal?: NodeJS.Signals, deadline = Date.now() + config.shutdownTimeoutMs): Promise<number> => {
    lifecycle.shuttingDown = true;
    logger.info({ signal, timeoutMs: Math.max(0, deadline - Date.now()) }, 'shutting down: readiness off, draining in-flight requests');
    await parts.stop(deadline);
    const code = http.timedOut() ? 1 : 0;
    logger.info({ code }, 'stopped');
    return code;
  };
  let drained: Promise<number> | undefined;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    address,
    metricsUrl: metricsPart?.server?.url,
    metricsJson,
    connections: { maxConnections, openFileLimit },
    lifecycle,
    drain: (signal, deadline) => (drained ??= drain(signal, deadline)),
  };
}
