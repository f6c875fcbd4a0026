import type { IRouter } from 'express';
import { AppError } from '../errors';
import type { Lifecycle, Readiness } from '../lifecycle';

/** Liveness and readiness, without authentication: the orchestrator and the proxy call them. */
export function healthRoutes(app: IRouter, deps: { readiness: Readiness; lifecycle: Lifecycle }): void {
  // Liveness never touches the store: a replica whose database is away is unready, not dead, and restarting it
  // would not bring the database back.
  app.get('/healthz', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    res.set('Cache-Control', 'no-store');
    if (deps.lifecycle.shuttingDown) throw new AppError('shutting_down');
    let migrated: boolean;
    try {
      migrated = await deps.readiness();
    } catch (error) {
      // A store's own verdict (the file replaced, a fault episode) keeps its message.
      if (error instanceof AppError) throw error;
      throw new AppError('store_unavailable', 'The store cannot be read.', { cause: error });
    }
    if (!migrated) throw new AppError('store_unavailable', 'The store is not migrated to the version this service needs.');
    res.json({ status: 'ready' });
  });
}
