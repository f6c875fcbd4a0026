import type { Config } from '../config';
import type { Readiness } from '../lifecycle';
import type { FeedObserver, PlantFeed } from '../plants/plant.feed';
import type { PlantRepository } from '../plants/plant.repository';
import type { StoreObserver } from '../plants/store-observer';
import type { Dispatching, WebhookObserver } from '../webhooks';

/** The variables the store reads: where the database is, how long to wait on it, and the webhook subscribers. */
export type StoreConfig = Pick<
  Config,
  'database' | 'databaseBusyTimeoutMs' | 'databasePoolSize' | 'databaseStatementTimeoutMs' | 'databaseConnectTimeoutMs' | 'webhooks' | 'events'
>;

/** Instruments the store reports to; absent when metrics are off. */
export type StoreHooks = { observer?: StoreObserver; webhookObserver?: WebhookObserver; feedObserver?: FeedObserver };

/**
 * What the service holds of the store, whatever the dialect: the repository and readiness check createApp needs,
 * the migration run before listening, background work after it (PostgreSQL: reconnect and migrate when it was
 * away at start), and the close at the end of the drain.
 */
export type Store = {
  plants: PlantRepository;
  /** The change feed over this store's events: started with the background work, stopped first in the drain. */
  feed: PlantFeed;
  readiness: Readiness;
  /** The new-plant webhook's dispatcher over this store's outbox; absent when no subscriber is configured. */
  webhooks?: Dispatching;
  /** PostgreSQL: migrates, and an unreachable server is logged and left to start(); SQLite has migrated already. */
  open: () => Promise<void>;
  start: () => void;
  close: () => Promise<void>;
};
