import { isPostgresMigrated, loadPostgresMigrations, migratePostgres } from '../db/migrate.postgres';
import type { Migration } from '../db/migrations';
import { createPostgresPool, redactUrl, type PgPool, type PostgresOptions } from '../db/postgres';
import type { Logger } from '../logger';
import { isUnavailable, PostgresPlantRepository } from '../plants/plant.repository.postgres';
import type { Dispatching, PostgresWebhooks } from '../webhooks';
import type { Store, StoreConfig, StoreHooks } from './store';

const RETRY_MS = 1000;

/**
 * PostgreSQL as the store: a pool, the repository on it, and the migration run. When PostgreSQL cannot be
 * reached at start the process starts anyway (/healthz 200, /readyz and writes 503) and start() retries the
 * migration every second until it succeeds. Once migrated, an outage needs nothing from here: the pool drops
 * broken connections and makes new ones when PostgreSQL answers again. The webhook dispatcher (on the shared
 * outbox) starts once both the service has started it and the migrations have made its table.
 */
export class PostgresStore implements Store {
  readonly pool: PgPool;
  readonly plants: PostgresPlantRepository;
  readonly webhooks: Dispatching | undefined;
  private readonly dispatcher: PostgresWebhooks | undefined;
  private readonly options: PostgresOptions;
  private dispatching: 'no' | 'asked' | 'started' = 'no';
  private readonly migrations: Migration[];
  private migrated = false;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    url: string,
    config: StoreConfig,
    private readonly logger: Logger,
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
          });
    /* eslint-enable @typescript-eslint/no-require-imports */
    this.plants = new PostgresPlantRepository(this.pool, logger, this.options.statementTimeoutMs, hooks.observer, this.dispatcher?.outbox);
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
  // ready, and a /readyz 200 in between would send a write that still answers 503 "not migrated yet".
  readonly readiness = async (): Promise<boolean> => (await isPostgresMigrated(this.pool, this.migrations)) && this.migrated;

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
    if (this.migrated || this.closed) return;
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
    await this.pool.end();
  };

  private async migrate(): Promise<void> {
    const applied = await migratePostgres(this.options, this.migrations);
    this.migrated = true;
    this.plants.markReady();
    this.startDispatcher();
    this.logger.info({ database: redactUrl(this.options.url), applied }, 'database ready');
  }
}
