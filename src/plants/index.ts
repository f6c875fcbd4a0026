/**
 * The plant resource: everything plants add to the service, as one Resource (src/resource.ts) that
 * src/resources.ts registers. Its routes, OpenAPI paths and schemas, scopes and event types are declared here;
 * its store parts (repository, change feed, routes over them) are built per dialect when src/store asks.
 */
import type { z } from 'zod';
import type { JsonSchema } from '../openapi-responses';
import type { Resource, ResourceParts } from '../resource';
import type { ChangeSignal, PlantEventLog } from './plant.events';
import { PlantController } from './plant.controller';
import { PlantFeed } from './plant.feed';
import { PLANTS_TAG, plantPaths } from './plant.openapi';
import type { PlantRepository } from './plant.repository';
import { PostgresPlantRepository } from './plant.repository.postgres';
import { SqlitePlantRepository } from './plant.repository.sqlite';
import { BATCH_ALLOW, EVENTS_ALLOW, PLANT_ALLOW, PLANTS_ALLOW, plantRoutes } from './plant.routes';
import { newPlantSchema, plantIdSchema, plantPatchSchema, plantSchema, putPlantSchema, storedPlantSchema } from './plant.schemas';
import { PlantService } from './plant.service';
import { plantWebhooks } from './plant.webhooks-openapi';

const READ = 'plants:read';
const WRITE = 'plants:write';

/** The plant parts over one store: the repository the routes run over, for what else writes through it (tests). */
export type PlantParts = ResourceParts & { repository: PlantRepository & PlantEventLog };

/** Its routes over one store's repository and feed, and the feed as background work. */
function partsOver(plants: PlantRepository & PlantEventLog, feed: PlantFeed): PlantParts {
  return {
    repository: plants,
    routes: (app, kit) => {
      const controller = new PlantController(new PlantService(plants), feed, (req) => kit.grants(req, READ), kit.leaseOf, kit.charge);
      plantRoutes(app, controller, kit);
    },
    // Change streams end at once: their clients reconnect to another replica, and none holds the drain.
    background: [{ name: 'change feed', start: () => feed.start(), stop: () => feed.stop() }],
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
  scopes: [READ, WRITE],
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
    sqlite: ({ db, health, logger, hooks, outbox, events }) => {
      const repository = new SqlitePlantRepository(db, logger, health, hooks.observer, outbox);
      const parts = partsOver(repository, new PlantFeed(repository, repository.changes, events, logger, hooks.feedObserver));
      // The search index follows the commits behind them (src/plants/plant.search.sqlite.ts).
      const search = { name: 'search index', start: () => repository.searchIndex.start(repository.changes), stop: () => repository.searchIndex.stop() };
      return { ...parts, background: [...(parts.background ?? []), search] };
    },
    postgres: ({ pool, statementTimeoutMs, logger, hooks, outbox, events, listen }) => {
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
      const feed = new PlantFeed(repository, changes, events, logger, hooks.feedObserver);
      return { ...partsOver(repository, feed), markReady: () => repository.markReady() };
    },
  },
};
