import type { Express } from 'express';
import type { Db } from '../db/database';
import { isMigrated, type Migration } from '../db/migrate';
import type { SqliteHealth } from '../db/sqlite-health';
import { AppError } from '../errors';
import type { Lifecycle } from './lifecycle';

/** Liveness and readiness, without authentication: the orchestrator and the proxy call them. */
export function healthRoutes(app: Express, deps: { db: Db; migrations: readonly Migration[]; lifecycle: Lifecycle; storeHealth: SqliteHealth }): void {
  app.get('/healthz', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    res.set('Cache-Control', 'no-store');
    if (deps.lifecycle.shuttingDown) throw new AppError('shutting_down');
    let migrated: boolean;
    try {
      migrated = isMigrated(deps.db, deps.migrations);
    } catch (error) {
      throw new AppError('store_unavailable', 'The store cannot be read.', { cause: error });
    }
    if (!migrated) throw new AppError('store_unavailable', 'The store is not migrated to the version this service needs.');
    deps.storeHealth.assertReady();
    res.json({ status: 'ready' });
  });
}
