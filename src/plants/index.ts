/**
 * The plant resource: everything plants add to the service, as one Resource (src/resource.ts) that
 * src/resources.ts registers. Its routes, OpenAPI paths and schemas, scopes and event types are declared here;
 * its store parts (repository, change feed, routes over them) are built per dialect when src/store asks.
 */
import type { z } from 'zod';
import type { JsonSchema } from '../openapi-responses';
import { whileLeading, type Resource, type ResourceHooks, type ResourceParts } from '../resource';
import { pruneEventsEvery, type ChangeSignal, type PlantEventLog } from './plant.events';
import { acrossWorkers } from './plant.commit-notices';
import { PlantController } from './plant.controller';
import { PlantFeed } from './plant.feed';
import { PLANTS_TAG, plantPaths } from './plant.openapi';
import type { PlantRepository } from './plant.repository';
import { PostgresPlantRepository } from './plant.repository.postgres';
import { refuseUnownedPlantsSqlite, SqlitePlantRepository } from './plant.repository.sqlite';
import { BATCH_ALLOW, EVENTS_ALLOW, PLANT_ALLOW, PLANTS_ALLOW, plantRoutes } from './plant.routes';
import { newPlantSchema, plantIdSchema, plantPatchSchema, plantSchema, putPlantSchema, storedPlantSchema } from './plant.schemas';
import { PlantService } from './plant.service';
import { plantWebhooks } from './plant.webhooks-openapi';
import { idempotent, pruneExpiredKeys, replayTakenKey } from './plant.idempotency';
import { sqliteIdempotencyKeys, type IdempotencyKeys } from './plant.idempotency-keys';
import { postgresIdempotencyKeys } from './plant.idempotency-keys.postgres';
import type { Part } from '../lifecycle';
import type { Logger } from '../logger';

const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

const READ = 'plants:read';
const WRITE = 'plants:write';

/** The plant parts over one store: the repository the routes run over, for what else writes through it (tests). */
export type PlantParts = ResourceParts & { repository: PlantRepository & PlantEventLog };

/** Its routes over one store's repository and feed, and the feed as background work. */
function partsOver(plants: PlantRepository & PlantEventLog, feed: PlantFeed, keys: IdempotencyKeys, context: { logger: Logger; idempotencyTtlMs?: number; hooks: ResourceHooks; events: { retentionMs: number } }): PlantParts {
  const ttlMs = context.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  return {
    repository: plants,
    routes: (app, kit) => {
      const controller = new PlantController(new PlantService(plants), feed, (req) => kit.grants(req, READ), kit.leaseOf, kit.tenantOf, kit.charge);
      plantRoutes(app, controller, kit, { idempotent: idempotent({ keys, ttlMs, callerOf: kit.callerOf, tenantOf: kit.tenantOf, logger: context.logger, machine: context.hooks.machine }), taken: replayTakenKey(keys) });
    },
    background: [
      // Change streams end at once: their clients reconnect to another replica, and none holds the drain.
      { name: 'change feed', start: () => feed.start(), stop: () => feed.stop() },
      // The events and keys tables are the machine's: one worker prunes them (the leader on SQLite across workers).
      { name: 'change feed prune', start: () => whileLeading(context.hooks.leader, () => pruneEventsEvery(plants, context.events.retentionMs, context.logger)), stop: (_deadline, release) => release()?.() } satisfies Part<() => (() => void) | undefined>,
      { name: 'idempotency key prune', start: () => whileLeading(context.hooks.leader, () => pruneExpiredKeys(keys, ttlMs, context.logger)), stop: (_deadline, release) => release()?.() } satisfies Part<() => (() => void) | undefined>,
    ],
  };
}

export const plants: Resource = {
  name: PLANTS_TAG.name,
  description: PLANTS_TAG.description,
  // /plants, /plants/events and /plants/{id}, as Express matches them.
  paths: /^\/plants(?:\/[^/]+)?\/?$/i,
  served: ['/plants', '/plants/{id}'],
  options: [
    { path: '/plants', allow: PLANTS_ALLOW },
    { path: '/plants/events', allow: EVENTS_ALLOW },
    { path: '/plants/batch', allow: BATCH_ALLOW },
    { path: '/plants/:id', allow: PLANT_ALLOW },
  ],
  streams: /^\/plants\/events\/?$/i,
  scopes: [READ, WRITE, 'plants:admin'],
  // By method alone, decided before routing: GET/HEAD read, POST/PUT/PATCH/DELETE write; other methods reach routing (405).
  access: { GET: READ, HEAD: READ, POST: WRITE, PUT: WRITE, PATCH: WRITE, DELETE: WRITE },
  eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'],
  openapi: {
    paths: plantPaths,
    schemas: [newPlantSchema, putPlantSchema, plantPatchSchema, plantSchema, storedPlantSchema],
    // The id reaches zod as number or bigint; on the wire it is a JSON integer.
    override: (schema: z.ZodType, json: JsonSchema) => {
      if (schema !== plantIdSchema) return;
      delete json.anyOf;
      Object.assign(json, { type: 'integer', format: 'int64' });
    },
    webhooks: plantWebhooks,
  },
  store: {
    sqlite: (context) => {
      const { db, health, logger, hooks, outbox, events } = context;
      refuseUnownedPlantsSqlite(db, context.tenants);
      const repository = new SqlitePlantRepository(db, logger, health, hooks.observer, outbox, hooks.writeTurn);
      // Other workers' commits on the same file wake the feed too (their notices through the supervisor).
      const changes = acrossWorkers(repository.changes, hooks.commits);
      const feed = new PlantFeed(repository, changes, events, logger, hooks.feedObserver, hooks.machine);
      return { ...partsOver(repository, feed, sqliteIdempotencyKeys(db), context), settled: () => repository.settled() };
    },
    postgres: (context) => {
      const { pool, statementTimeoutMs, logger, hooks, outbox, events, listen } = context;
      const repository = new PostgresPlantRepository(pool, logger, statementTimeoutMs, hooks.observer, outbox);
      // Every replica's commits: this one's as they happen, the others' through NOTIFY plant_events (migrations/postgres/005).
      const changes: ChangeSignal = (wake) => {
        const local = repository.changes(wake);
        const stop = listen('plant_events', wake);
        return () => {
          local();
          stop();
        };
      };
      const feed = new PlantFeed(repository, changes, events, logger, hooks.feedObserver, hooks.machine);
      return { ...partsOver(repository, feed, postgresIdempotencyKeys(pool), context), markReady: () => repository.markReady(context.tenants) };
    },
  },
};
