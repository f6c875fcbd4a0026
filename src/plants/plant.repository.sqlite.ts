import type { TenantKey } from '../tenant';
import type Database from 'better-sqlite3';
import type { ChangeOutbox } from '../change-outbox';
import type { Db } from '../db/database.sqlite';
import { GroupCommit, type Queued } from '../db/group-commit';
import { errorOfFault, moduleBeside, SqliteWriter } from '../db/sqlite-writer';
import type { Logger } from '../logger';
import { AppError } from '../errors';
import type { SqliteHealth } from '../db/health.sqlite';
import type { PlantWrite } from './plant.write-rule';
import type { ChangeEvent, ChangeSignal, EventBounds, PlantEventLog } from './plant.events';
import { SqliteEventLog } from './plant.events.sqlite';
import { plantJsonSqlite } from './plant.json';
import { fillSearchKeysSqlite } from './plant.search-keys';
import { PlantWriter } from './plant.writer';
import type { BatchOutcome, ChangeContext, FoundPlant, KeepAnswer, PlantRepository, PlantsPage, WriteOutcome } from './plant.repository';
import type { PlantListQuery } from './plant.list-query';
import { SqlitePlantList } from './plant.list.sqlite';
import { sqlitePlantCommit, translate, type CommitBatch, type Committed, type Op, type Outcome } from './plant.commit.sqlite';
import { settle, wireOps, type ThreadResult } from './plant.thread.sqlite';
import { ignoreStore, type StoreObserver } from '../observers';
import { ConfigError, type TenantsConfig } from '../config';

// A plant as JSON text, written by SQLite: plantJson's bytes (plant.json.ts), with no row object per plant.
const PLANT_JSON = plantJsonSqlite();

// A read that meets a locked or broken store: the same 503, worded for a read.
function translateRead(error: unknown): Error {
  const translated = translate(error);
  return translated instanceof AppError ? new AppError('store_unavailable', 'The store cannot be read now; retry later.', { cause: error }) : translated;
}

type Batch = Queued<Op, Outcome>[];

/** The webhook outbox as the writer thread needs it: what it writes there, and the wake after a commit that did. */
type ThreadOutbox = ChangeOutbox & { subscribers: readonly string[]; types: ReadonlySet<string>; onRecorded(): void };
const threadOutbox = (outbox: ChangeOutbox | undefined): ThreadOutbox | undefined =>
  outbox !== undefined && 'subscribers' in outbox && 'types' in outbox && 'onRecorded' in outbox ? (outbox as ThreadOutbox) : undefined;

/**
 * Group commit: creates, edits and deletes that arrive in one event-loop turn share one transaction and so one
 * fsync (synchronous=FULL), applied in arrival order, each with its change event (plant.commit.sqlite.ts). The
 * transaction runs on the writer thread (src/writer.thread.ts), so its SQL, its fsync and a checkpoint never stop
 * this event loop; one batch is in the thread at a time, and what arrives meanwhile goes in the next, after it.
 * Each caller is answered only after the commit that holds its write. A write that fails on its own (a bug, not a
 * full or locked store) fails alone: its savepoint undoes the change and its event together. A locked file is
 * retried on timers here (health.sqlite.ts), never waited for. Reads are plain synchronous SELECTs on this
 * connection, which sees every commit the thread answered. A store with no file (`:memory:`) commits in process.
 */
export class SqlitePlantRepository extends PlantWriter implements PlantRepository, PlantEventLog {
  private readonly queue = new GroupCommit<Op, Outcome>((batch) => this.commit(batch));
  private readonly local: CommitBatch;
  private readonly writer: SqliteWriter | undefined;
  private readonly outbox: ThreadOutbox | undefined;
  private readonly pageCap: () => number;
  private readonly byId: Database.Statement<[TenantKey, bigint], { json: string; version: bigint }>;
  private readonly lists: SqlitePlantList;
  private readonly events: SqliteEventLog;
  private readonly listeners = new Set<() => void>();
  /** The batch in the thread, and the kept answers it may ask to render; the writes that arrived since. */
  private running = false;
  private keeps = new Map<number, KeepAnswer>();
  private held: Batch = [];

  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly health: SqliteHealth,
    private readonly observer: StoreObserver = ignoreStore,
    outbox?: ChangeOutbox,
  ) {
    super();
    const keyed = fillSearchKeysSqlite(db);
    if (keyed > 0) logger.info({ plants: keyed }, 'filled the search keys of plants stored before search');
    this.events = new SqliteEventLog(db);
    // By the primary key (tenant, id): another tenant's plant is exactly a missing one.
    this.byId = db.prepare<[TenantKey, bigint], { json: string; version: bigint }>(`SELECT ${PLANT_JSON} AS json, version FROM plants WHERE tenant = ? AND id = ?`);
    // Keyset paging: each page is a range scan of a tenant-leading index in its order (migrations/sqlite/012), whatever its depth.
    this.lists = new SqlitePlantList(db, () => this.events.lastWritten());
    // Prepared here too, whether or not the thread runs it: a write statement that cannot prepare fails the start.
    this.local = sqlitePlantCommit(db, outbox);
    this.outbox = threadOutbox(outbox);
    const pageCap = db.prepare<[], bigint>('PRAGMA max_page_count').pluck();
    this.pageCap = () => Number(pageCap.get());
    const threaded = !db.memory && (outbox === undefined || this.outbox !== undefined) && SqliteWriter.available();
    this.writer = threaded
      ? new SqliteWriter(
          db,
          { file: db.name, readonly: db.readonly, module: moduleBeside(__filename, 'plant.thread.sqlite'), outbox: this.outbox && { subscribers: this.outbox.subscribers, types: [...this.outbox.types] } },
          (ref, outcome) => this.keeps.get(ref)?.render(outcome as Outcome),
        )
      : undefined;
  }

  protected submit(tenant: TenantKey, write: PlantWrite, context: ChangeContext | undefined): Promise<WriteOutcome> {
    // The tenant, trace and key ride on the write itself: no second object per write.
    if (context === undefined) return this.queue.submit({ ...write, tenant }) as Promise<WriteOutcome>;
    const { trace, keep } = context;
    return this.queue.submit({ ...write, tenant, ...(trace === undefined ? {} : { trace }), ...(keep === undefined ? {} : { keep }) }) as Promise<WriteOutcome>;
  }

  batch(tenant: TenantKey, writes: readonly PlantWrite[], context?: ChangeContext): Promise<BatchOutcome> {
    return this.queue.submit({ tenant, writes, trace: context?.trace, keep: context?.keep }) as Promise<BatchOutcome>;
  }

  // Reads answer at once: a synchronous SELECT, wrapped in the promise the store contract asks for.
  findById(tenant: TenantKey, id: bigint): Promise<FoundPlant | undefined> {
    try {
      return Promise.resolve(this.byId.get(tenant, id));
    } catch (error) {
      return Promise.reject(translateRead(error));
    }
  }

  list(tenant: TenantKey, query: PlantListQuery): Promise<PlantsPage> {
    try {
      return Promise.resolve(this.lists.read(tenant, query));
    } catch (error) {
      return Promise.reject(translateRead(error));
    }
  }

  readEvents(after: bigint, limit: number): Promise<ChangeEvent[]> {
    try {
      return Promise.resolve(this.events.read(after, limit));
    } catch (error) {
      return Promise.reject(translateRead(error));
    }
  }

  readTenantEvents(tenant: TenantKey, after: bigint, limit: number): Promise<ChangeEvent[]> {
    try {
      return Promise.resolve(this.events.readTenant(tenant, after, limit));
    } catch (error) {
      return Promise.reject(translateRead(error));
    }
  }

  eventBounds(resumeAfter?: bigint): Promise<EventBounds> {
    try {
      return Promise.resolve(this.events.bounds(resumeAfter));
    } catch (error) {
      return Promise.reject(translateRead(error));
    }
  }

  pruneEvents(beforeMs: number, limit: number): Promise<number> {
    try {
      return Promise.resolve(this.events.prune(beforeMs, limit));
    } catch (error) {
      return Promise.reject(translate(error));
    }
  }

  /** Local commits are the only writes to this file: each one that wrote events wakes the listeners. */
  readonly changes: ChangeSignal = (wake) => {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  };

  private commit(batch: Batch): void {
    // Arrival order: what arrives while a batch is in the thread commits after it.
    if (this.running) {
      this.held = this.held.concat(batch);
      return;
    }
    this.running = true;
    const started = performance.now();
    this.attempt(batch).then(
      (committed) => this.answer(batch, committed, started),
      (error: unknown) => this.fail(batch, error),
    ).finally(() => {
      this.running = false;
      this.keeps = new Map();
      const held = this.held;
      this.held = [];
      if (held.length > 0) this.commit(held);
    });
  }

  /** One transaction for the batch: on the writer thread, or in process for a store with no file. */
  private async attempt(batch: Batch): Promise<Committed> {
    this.health.verifyFile();
    const ops = batch.map(({ op }) => op);
    let committed: Committed;
    if (this.writer === undefined) committed = this.local(ops);
    else {
      const reply = await this.writer.request<ThreadResult>({ ops: wireOps(ops, this.keeps), pageCap: this.pageCap() });
      if ('fault' in reply) throw errorOfFault(reply.fault);
      if (reply.result.recorded > 0) this.outbox?.onRecorded();
      committed = { outcomes: settle(reply.result, this.keeps), wrote: reply.result.wrote };
    }
    this.health.committed();
    return committed;
  }

  private answer(batch: Batch, { outcomes, wrote }: Committed, started: number): void {
    this.observer.committed(batch.length, (performance.now() - started) / 1000);
    this.logger.debug({ rows: batch.length, ms: Math.round((performance.now() - started) * 100) / 100 }, 'group commit');
    outcomes.forEach((outcome, index) => {
      const { resolve, reject } = batch[index] as Batch[number];
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    });
    if (wrote) for (const wake of this.listeners) wake();
  }

  private fail(batch: Batch, error: unknown): void {
    const retryInMs = this.health.retryDelay(error);
    if (retryInMs !== undefined) {
      // Tried again in front of everything that arrived since.
      this.queue.retry(batch.concat(this.held), retryInMs);
      this.held = [];
      return;
    }
    this.observer.failed(error);
    const translated = translate(error);
    for (const { reject } of batch) reject(translated);
  }
}

/**
 * Tenants on over a file that holds plants of the shared tenant (stored before tenants were turned on): only
 * TENANT_DEFAULT says whose they are, so without it the start is refused rather than leave them to no one.
 */
export function refuseUnownedPlantsSqlite(db: Db, tenants: TenantsConfig | undefined): void {
  if (tenants === undefined || tenants.defaultName !== undefined) return;
  if (db.prepare("SELECT 1 FROM plants WHERE tenant = '' LIMIT 1").get() === undefined) return;
  throw new ConfigError(
    'TENANT_DEFAULT: this store holds plants stored before tenants were turned on; set TENANT_DEFAULT to the name of the tenant that keeps them',
  );
}
