/**
 * The resource contract: everything a resource (src/plants/, one day src/gardens/) adds to the service, in one
 * typed value. app.ts mounts its routes and OPTIONS answers, src/openapi.ts assembles its paths, schemas and
 * webhooks, the composition root gives auth its scopes and config its event types, and src/store builds its parts
 * per dialect through `store`. A resource is registered in one place, src/resources.ts. Types only: this file
 * runs nothing and knows no resource.
 */
import type { Express, Request, RequestHandler } from 'express';
import type { z } from 'zod';
import type { Lease } from './auth';
import type { ChangeOutbox, ChangeOutboxRows } from './change-outbox';
import type { Db } from './db/database.sqlite';
import type { PgPool } from './db/database.postgres';
import type { WriteTurn } from './db/group-commit';
import type { SqliteHealth } from './db/health.sqlite';
import type { EventsConfig } from './config';
import type { TenantsConfig } from './config/tenants';
import type { Part } from './lifecycle';
import type { Logger } from './logger';
import type { FeedObserver, StoreObserver } from './observers';
import type { JsonSchema } from './openapi-responses';
import type { TenantKey } from './tenant';

export type Resource = {
  /** Its OpenAPI tag and the first segment of its paths, e.g. `plants`. */
  name: string;
  /** The tag's description in the OpenAPI document. */
  description: string;
  /** Every path it serves, as Express matches them (any case, optional trailing slash): auth and OPTIONS use it. */
  paths: RegExp;
  /** How the 404 names what it serves: `/plants and /plants/{id}`. */
  served: readonly string[];
  /** OPTIONS answers (no token needed) and the methods each path allows, also its 405's Allow. */
  options: readonly { path: string; allow: string }[];
  /** Paths whose answer is a stream open as long as its client reads: never counted as waiting, never shed. */
  streams?: RegExp;
  /** Its scopes, and the one a request to its paths needs by method (absent: none, routing answers). */
  scopes: readonly string[];
  access: Readonly<Partial<Record<string, string>>>;
  /** The change types its webhooks can carry; WEBHOOK_EVENTS may name only these. */
  eventTypes: readonly string[];
  openapi: ResourceDocument;
  store: ResourceStores;
};

export type ResourceDocument = {
  /** Its paths, each operation with its responses and the errors it can answer (src/openapi-responses.ts). */
  paths(): Record<string, JsonSchema>;
  /** The zod schemas published as components, each with `.meta({ id })`; `override` writes what zod cannot. */
  schemas: readonly z.ZodType[];
  override?(schema: z.ZodType, json: JsonSchema): void;
  /** Its entries in the document's `webhooks`, each written with the webhooks subsystem's `operation`. */
  webhooks?(operation: WebhookOperation): Record<string, unknown>;
};

/** One change type's delivery as the OpenAPI `webhooks` documents it (src/webhooks/delivery.openapi.ts). */
export type WebhookSpec = {
  type: string;
  /** The type header before the delivery headers rather than after them. */
  typeFirst?: boolean;
  operationId: string;
  summary: string;
  description: string;
  body: { description: string; schema: JsonSchema };
};
export type WebhookOperation = (spec: WebhookSpec) => Record<string, unknown>;

/** Its store parts for each dialect, built by src/store once the connection is open (SQLite: and migrated). */
export type ResourceStores = {
  sqlite(context: SqliteContext): ResourceParts;
  postgres(context: PostgresContext): ResourceParts;
};

/**
 * What the store hands its resources beside config: instruments to report to (absent when metrics are off), and
 * `machine`, the slots every worker of the machine shares (absent in one process: each counts on its own).
 */
export type { WriteTurn };

export type ResourceHooks = {
  observer?: StoreObserver;
  feedObserver?: FeedObserver;
  machine?: MachineSlots;
  /** SQLite at WORKERS above 1: the machine's write turn each group commit takes (src/db/group-commit.ts). */
  writeTurn?: WriteTurn;
  commits?: MachineCommits;
  /** SQLite at WORKERS above 1: what runs once per machine starts only in the leader (absent: at once). */
  leader?: MachineLeader;
};

/**
 * Commits told across the workers of one machine on SQLite, through the supervisor (src/supervisor/commits.ts): a
 * worker whose commit wrote change events tells the others, whose feed and webhook dispatcher then wake as for a
 * commit of their own. Absent in one process and on PostgreSQL (NOTIFY tells every process there).
 */
export type MachineCommits = {
  /** This worker committed `events` change events: they are on disk, readable by every other process. */
  tell(events: number): void;
  /** Calls `heard` for each commit another worker told of; returns what stops it. */
  hear(heard: (events: number) => void): () => void;
};

/**
 * What runs once per machine at WORKERS above 1 on SQLite (the webhook dispatcher, scheduled backups): the supervisor
 * names one live worker leader and another only once it exits. `lead` is called once, when this worker leads (at
 * once if it already does); the returned function forgets it (a drain before that).
 */
export type MachineLeader = { whenLeading(lead: () => void): () => void };

/**
 * Starts background work at once without a leader (one process, PostgreSQL), or once this worker leads. The returned
 * function forgets the lead and answers what `start` returned when it ran (undefined when it never did), for the
 * caller to stop as it stops: at once, or awaited within the drain's deadline.
 */
export function whileLeading<T>(leader: MachineLeader | undefined, start: () => T): () => T | undefined {
  if (leader === undefined) {
    const started = start();
    return () => started;
  }
  let started: T | undefined;
  const forget = leader.whenLeading(() => {
    started = start();
  });
  return () => {
    forget();
    return started;
  };
}

/**
 * Limits held for the whole machine at WORKERS above 1, by the supervisor (src/supervisor/slots.ts): one IPC round
 * trip per slot, so only for what is rare beside plain requests (a stream opened, a keyed write). Each resolves to
 * the slot's release (which frees it once, however often called), or undefined when none is free.
 */
export type MachineSlots = {
  /** One of `max` slots of `kind` (change streams open). */
  count(kind: string, max: number): Promise<(() => void) | undefined>;
  /** The one slot `name` of `kind` (an Idempotency-Key in flight): undefined while another request holds it. */
  hold(kind: string, name: string): Promise<(() => void) | undefined>;
};

type Context = {
  logger: Logger;
  hooks: ResourceHooks;
  events: EventsConfig;
  /** How long a write's answer is kept for a retry with its Idempotency-Key (IDEMPOTENCY_TTL); absent: 24 h. */
  idempotencyTtlMs?: number;
  /** Tenants (TENANT_CLAIM, TENANT_DEFAULT); absent when off. */
  tenants?: TenantsConfig;
};

/** `outbox`: the webhook outbox its commits record their events to (src/change-outbox.ts); absent without subscribers. */
export type SqliteContext = Context & { db: Db; health: SqliteHealth; outbox?: ChangeOutbox };

export type PostgresContext = Context & {
  /** The webhook outbox whose rows its batch statement writes; absent without subscribers. */
  outbox?: ChangeOutboxRows;
  pool: PgPool;
  statementTimeoutMs: number;
  /** LISTEN on `channel` (another replica's NOTIFY); the store stops every listener when it closes. */
  listen: (channel: string, wake: () => void) => () => void;
};

/** What a resource's store parts give the service: its routes over them, its background work, its readiness. */
export type ResourceParts = {
  routes(app: Express, kit: RouteKit): void;
  /** Work that runs after the listener and stops at once in the drain (a change feed). */
  background?: readonly Part<unknown>[];
  /**
   * PostgreSQL: the migrations are applied; it finishes what they leave to it (plants: the search keys) and then
   * serves. Until it resolves every operation answers 503, and the store is not ready.
   */
  markReady?(): void | Promise<void>;
  /** SQLite: resolves once its queued writes are answered; the store closes its connection only then. */
  settled?(): Promise<void>;
};

/** What app.ts hands each resource's routes: the body parser and what auth decided about the request. */
export type RouteKit = {
  readBody: RequestHandler;
  /** The same parser with BATCH_BODY_LIMIT, for a batch of writes. */
  readBatchBody: RequestHandler;
  methodNotAllowed: (allow: string) => RequestHandler;
  grants: (req: Request, scope: string) => boolean;
  leaseOf: (req: Request) => Lease | undefined;
  /** Counts a request that stands for `weight` (a batch of writes) as that many against the rate limit: a 429 past it. */
  charge: (req: Request, weight: number) => Promise<void>;
  /** Who the request is for what the service keeps per caller (Idempotency-Key): a token's or a JWT subject's identity. */
  callerOf: (req: Request) => string;
  /** The tenant the request acts in (the shared one with tenants off): every read and write of it names this key. */
  tenantOf: (req: Request) => TenantKey;
};

/** A registered resource with the parts its store built: what createApp mounts. */
export type Mounted = { resource: Resource; parts: ResourceParts };
