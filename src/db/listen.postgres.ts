import pg from 'pg';
import type { Logger } from '../logger';
import { connectionConfig, type PostgresOptions } from './database.postgres';

const RECONNECT_MS = 1000;

/**
 * LISTEN on one channel on a connection of its own (a pooled one would be handed to queries), calling `notify`
 * for each notification and once after every (re)connect, since notifications sent while away are lost. Reconnects
 * every second while PostgreSQL is away. Returns the stop.
 */
export function listenPostgres(options: PostgresOptions, channel: string, notify: () => void, logger: Logger): () => Promise<void> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = () => {
    if (stopped) return;
    const next = new pg.Client(connectionConfig(options, false));
    client = next;
    let lost = false;
    const again = (err?: unknown) => {
      if (lost) return;
      lost = true;
      next.end().catch(() => undefined);
      if (stopped) return;
      logger.debug({ err }, `LISTEN ${channel}: connection lost, reconnecting`);
      retry = setTimeout(connect, RECONNECT_MS);
      retry.unref();
    };
    next.on('error', again);
    next.on('end', () => again());
    next.on('notification', notify);
    next
      .connect()
      .then(() => next.query(`LISTEN ${channel}`))
      .then(() => {
        if (stopped) return next.end();
        notify();
        return undefined;
      })
      .catch(again);
  };
  connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
