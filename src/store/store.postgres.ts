import { isPostgresMigrated, loadPostgresMigrations, migratePostgres } from '../db/migrate.postgres';
import type { Migration } from '../db/migrations';
import { createPostgresPool, redactUrl, type PgPool, type PostgresOptions } from '../db/database.postgres';
import { assertWritable } from '../db/health.postgres';
import { listenPostgres } from '../db/listen.postgres';
import type { Logger } from '../logger';
// The classification of a driver error as "PostgreSQL unreachable" lives with the SQL that meets it.
import { isUnavailable } from '../db/health.postgres';
import type { Mounted, Resource } from '../resource';
import type { Dispatching, PostgresWebhooks } from '../webhooks';
import type { Store, StoreConfig, StoreHooks } from './store';
import { ConfigError } from '../config';

const RETRY_MS = 1000;

/**
 * PostgreSQL as the store: a pool, each resource's parts on it, and the migration run. When PostgreSQL cannot be
 * reached at start the process starts anyway (/healthz 200, /readyz and writes 503) and start() retries the
 * migration every second until it succeeds. Once migrated, an outage needs nothing from here: the pool drops
 * broken connections and makes new ones when PostgreSQL answers again. The webhook dispatcher (on the shared
 * outbox) starts once both the service has started it and the migrations have made its table.
 */
export class PostgresStore implements Store {
  readonly pool: PgPool;
  readonly resources: readonly Mounted[];
  readonly webhooks: Dispatching | undefined;
  private readonly dispatcher: PostgresWebhooks | undefined;
  private readonly options: PostgresOptions;
  private dispatching: 'no' | 'asked' | 'started' = 'no';
  private readonly migrations: Migration[];
  private migrated = false;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  // A resource refused the store as configured (plants: TENANT_DEFAULT missing): unready for good, one error line.
  private refused = false;
  private readonly stopListening: Set<() => Promise<void>> = new Set();

  constructor(
    url: string,
    config: StoreConfig,
    private readonly logger: Logger,
    resources: readonly Resource[],
    hooks: StoreHooks = {},
  ) {
    this.options = {
      url,
      poolSize: config.databasePoolSize,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
    };
    this.migrations = loadPostgresMigrations();
    this.pool = createPostgresPool(this.options, logger);
    /* eslint-disable @typescript-eslint/no-require-imports */
    this.dispatcher =
      config.webhooks === undefined
        ? undefined
        : (require('../webhooks') as typeof import('../webhooks')).createPostgresWebhooks(config.webhooks, this.pool, {
            logger,
            observer: hooks.webhookObserver,
            tenants: config.tenants,
          });
    /* eslint-enable @typescript-eslint/no-require-imports */
    const context = {
      pool: this.pool,
      statementTimeoutMs: this.options.statementTimeoutMs,
      logger,
      hooks,
      outbox: this.dispatcher?.outbox,
      events: config.events,
      idempotencyTtlMs: config.idempotencyTtlMs,
      tenants: config.tenants,
      listen: (channel: string, wake: () => void) => {
        const stop = listenPostgres(this.options, channel, wake, logger);
        this.stopListening.add(stop);
        return () => {
          this.stopListening.delete(stop);
          void stop();
        };
      },
    };
    this.resources = resources.map((resource) => ({ resource, parts: resource.store.postgres(context) }));
    const dispatcher = this.dispatcher;
    this.webhooks = dispatcher && {
      start: () => {
        this.dispatching = 'asked';
        this.startDispatcher();
      },
      stop: async (timeoutMs) => {
        const started = this.dispatching === 'started';
        this.dispatching = 'no';
        if (started) await dispatcher.stop(timeoutMs);
      },
    };
  }

  private startDispatcher(): void {
    if (this.dispatching !== 'asked' || !this.migrated) return;
    this.dispatching = 'started';
    this.dispatcher?.start();
  }

  // Also this process's own flag: the schema is committed a round trip before migrate() marks the repository
  // ready, and a /readyz 200 in between would send a write that still answers 503 "not migrated yet". Checked
  // first, so a replica still migrating (or waiting for another's migration lock) answers without a query.
  // Ready means a write can commit: migrated, and the pool's sessions not read-only (src/db/health.postgres.ts).
  readonly readiness = async (): Promise<boolean> => {
    if (!this.migrated || !(await isPostgresMigrated(this.pool, this.migrations))) return false;
    await assertWritable(this.pool);
    return true;
  };

  readonly open = async (): Promise<void> => {
    try {
      await this.migrate();
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      this.logger.warn(
        { err, database: redactUrl(this.options.url), retryMs: RETRY_MS },
        'PostgreSQL cannot be reached; starting unready and retrying',
      );
    }
  };

  readonly start = (): void => {
    if (this.migrated || this.closed || this.refused) return;
    this.retry = setTimeout(() => {
      this.migrate().then(
        () => undefined,
        (err: unknown) => {
          // An edited migration found only now is the same fault as at start: stop, so it is seen.
          if (!isUnavailable(err)) throw err;
          this.start();
        },
      );
    }, RETRY_MS);
  };

  readonly close = async (): Promise<void> => {
    this.closed = true;
    clearTimeout(this.retry);
    await Promise.all([...this.stopListening].map((stop) => stop()));
    await this.pool.end();
  };

  private async migrate(): Promise<void> {
    const applied = await migratePostgres(this.options, this.migrations);
    // Each resource finishes what the migrations leave to it before it serves (plants: the search keys), or
    // refuses to serve this store as configured: then the process stays up and unready, saying why once.
    try {
      for (const { parts } of this.resources) await parts.markReady?.();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.refused = true;
      this.logger.error({ database: redactUrl(this.options.url) }, err.message);
      return;
    }
    this.migrated = true;
    this.startDispatcher();
    this.logger.info({ database: redactUrl(this.options.url), applied }, 'database ready');
  }
}
