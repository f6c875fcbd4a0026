import type { TenantKey } from '../tenant';
import type Database from 'better-sqlite3';
import type { ChangeOutbox } from '../change-outbox';
import type { Db } from '../db/database.sqlite';
import { GroupCommit, type Queued, type WriteTurn } from '../db/group-commit';
import type { Logger } from '../logger';
import { AppError } from '../errors';
import { isStoreFault, type SqliteHealth } from '../db/health.sqlite';
import { sqliteChangeApplier, type ChangeWrite, type Positions } from './plant.write.sqlite';
import { failed, type PlantWrite } from './plant.write-rule';
import type { ChangeEvent, ChangeSignal, EventBounds, PlantEventLog } from './plant.events';
import { SqliteEventLog } from './plant.events.sqlite';
import { plantJsonSqlite } from './plant.json';
import { fillSearchKeysSqlite } from './plant.search-keys';
import { IdempotencyKeyTaken, keepAnswerSqlite } from './plant.idempotency-keys';
import { PlantWriter } from './plant.writer';
import type { BatchOutcome, ChangeContext, FoundPlant, KeepAnswer, PlantRepository, PlantsPage, WriteOutcome } from './plant.repository';
import type { PlantListQuery } from './plant.list-query';
import { SqlitePlantList } from './plant.list.sqlite';
import { ignoreStore, type StoreObserver } from '../observers';
import { ConfigError, type TenantsConfig } from '../config';

// A plant as JSON text, written by SQLite: plantJson's bytes (plant.json.ts), with no row object per plant.
const PLANT_JSON = plantJsonSqlite();

function translate(error: unknown): Error {
  // Matched by name and code, not instanceof: the native addon keeps the SqliteError class of the first
  // module instance that loaded it, so a second one (a jest registry) would never match.
  if (isStoreFault(error)) {
    return new AppError('store_unavailable', undefined, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

// A read that meets a locked or broken store: the same 503, worded for a read.
function translateRead(error: unknown): Error {
  const translated = translate(error);
  return translated instanceof AppError ? new AppError('store_unavailable', 'The store cannot be read now; retry later.', { cause: error }) : translated;
}

/** A batch's writes, applied all or nothing inside the group commit that holds them. */
type WriteUnit = { tenant: TenantKey; writes: readonly PlantWrite[]; trace?: ChangeWrite['trace']; keep?: KeepAnswer };
/** A write and, sent with Idempotency-Key, its answer to keep in the same savepoint. */
type Op = (ChangeWrite & { tenant: TenantKey; keep?: KeepAnswer }) | WriteUnit;
type Outcome = WriteOutcome | BatchOutcome;
type Batch = Queued<Op, Outcome>[];

/** Thrown inside a unit's savepoint to undo it: the first write that failed. */
class UnitFailed extends Error {
  constructor(readonly outcome: Extract<BatchOutcome, { outcome: 'failed' }>) {
    super('a batch write failed');
  }
}

/**
 * Group commit: creates, edits and deletes that arrive in one event-loop turn share one transaction and so one
 * fsync (synchronous=FULL), applied in arrival order, each with its change event. Each caller is answered only
 * after the commit that holds its write. A write that fails on its own (a bug, not a full or locked store) fails
 * alone: its savepoint undoes the change and its event together. Reads are plain synchronous SELECTs on the same
 * connection: they run between commits, never inside one, so a read waits at most for the commit already running.
 * Each write is read, decided and written by plant.write.sqlite.ts, the path `plant-store import` takes too.
 * Positions are counted here (`positions.last`), taken from the file's record at the start of each batch (an
 * import may have written events since), and put back when a write rolls back.
 */
export class SqlitePlantRepository extends PlantWriter implements PlantRepository, PlantEventLog {
  private readonly queue: GroupCommit<Op, Outcome>;
  private readonly commitBatch: Database.Transaction<(batch: Batch) => (Outcome | Error)[]>;
  private readonly byId: Database.Statement<[TenantKey, bigint], { json: string; version: bigint }>;
  private readonly lists: SqlitePlantList;
  private readonly events: SqliteEventLog;
  private readonly positions: Positions;
  private readonly listeners = new Set<(events: number) => void>();

  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly health: SqliteHealth,
    private readonly observer: StoreObserver = ignoreStore,
    outbox?: ChangeOutbox,
    turn?: WriteTurn,
  ) {
    super();
    this.queue = new GroupCommit<Op, Outcome>((batch) => this.commit(batch), turn);
    const keyed = fillSearchKeysSqlite(db);
    if (keyed > 0) logger.info({ plants: keyed }, 'filled the search keys of plants stored before search');
    this.events = new SqliteEventLog(db);
    this.positions = { last: this.events.lastWritten() };
    // By the primary key (tenant, id): another tenant's plant is exactly a missing one.
    this.byId = db.prepare<[TenantKey, bigint], { json: string; version: bigint }>(`SELECT ${PLANT_JSON} AS json, version FROM plants WHERE tenant = ? AND id = ?`);
    // Keyset paging: each page is a range scan of a tenant-leading index in its order (migrations/sqlite/012), whatever its depth.
    this.lists = new SqlitePlantList(db, () => this.events.lastWritten());
    const positions = this.positions;
    // A nested transaction is a savepoint: a write that throws takes its event (and its position) back with it.
    const apply = sqliteChangeApplier(db, this.events, positions, outbox);
    const keys = keepAnswerSqlite(db);
    // A keyed write's answer is kept in its savepoint: a row that cannot be written takes the write back with it.
    const applyOne = db.transaction((write: ChangeWrite & { tenant: TenantKey; keep?: KeepAnswer }, at: number) => {
      const outcome = apply(write, write.tenant, at);
      if (write.keep !== undefined) keys.keep(write.tenant, write.keep, outcome);
      return outcome;
    });
    // A batch is one savepoint: its first failed write throws, which undoes its earlier writes, events and webhook rows.
    const applyUnit = db.transaction((unit: WriteUnit, at: number): BatchOutcome => {
      const results: WriteOutcome[] = [];
      for (const [index, write] of unit.writes.entries()) {
        const result = apply(unit.trace === undefined ? write : { ...write, trace: unit.trace }, unit.tenant, at);
        if (failed(result.outcome)) throw new UnitFailed({ outcome: 'failed', index, result });
        results.push(result);
      }
      const outcome: BatchOutcome = { outcome: 'applied', results };
      if (unit.keep !== undefined) keys.keep(unit.tenant, unit.keep, outcome);
      return outcome;
    });
    this.commitBatch = db.transaction((batch: Batch) => {
      // Read again under the write lock: `plant-store import` numbers the events it writes after the same record.
      positions.last = this.events.lastWritten();
      const at = Date.now();
      return batch.map(({ op }) => {
        // Another process on the file committed this key since this one looked: its write is not applied again.
        if (op.keep !== undefined && keys.taken(op.tenant, op.keep)) return new IdempotencyKeyTaken();
        const before = positions.last;
        try {
          return 'writes' in op ? applyUnit(op, at) : applyOne(op, at);
        } catch (error) {
          positions.last = before;
          if (error instanceof UnitFailed) return error.outcome;
          const translated = translate(error);
          // A store that cannot take writes fails the whole batch: rethrown, the transaction rolls back.
          if (translated instanceof AppError) throw error;
          return translated;
        }
      });
    });
  }

  protected submit(tenant: TenantKey, write: PlantWrite, context: ChangeContext | undefined): Promise<WriteOutcome> {
    // The tenant, trace and key ride on the write itself: no second object per write.
    if (context === undefined) return this.queue.submit({ ...write, tenant }) as Promise<WriteOutcome>;
    const { trace, keep } = context;
    return this.queue.submit({ ...write, tenant, ...(trace === undefined ? {} : { trace }), ...(keep === undefined ? {} : { keep }) }) as Promise<WriteOutcome>;
  }

  /** Once every queued write is answered (the drain, before the connection closes). */
  settled(): Promise<void> {
    return this.queue.settled();
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

  /** Each local commit that wrote events wakes the listeners with their count (other workers': plant.commit-notices.ts). */
  readonly changes: ChangeSignal = (wake) => {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  };

  private commit(batch: Batch): void {
    const started = performance.now();
    const firstPos = this.positions.last;
    let outcomes: (Outcome | Error)[];
    try {
      this.health.verifyFile();
      outcomes = this.commitBatch.immediate(batch);
      this.health.committed();
    } catch (error) {
      this.positions.last = firstPos;
      const retryInMs = this.health.retryDelay(error);
      if (retryInMs !== undefined) {
        this.queue.retry(batch, retryInMs);
        return;
      }
      this.observer.failed(error);
      const translated = translate(error);
      for (const { reject } of batch) reject(translated);
      return;
    }
    this.observer.committed(batch.length, (performance.now() - started) / 1000);
    this.logger.debug({ rows: batch.length, ms: Math.round((performance.now() - started) * 100) / 100 }, 'group commit');
    outcomes.forEach((outcome, index) => {
      const { resolve, reject } = batch[index] as Batch[number];
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    });
    const events = Number(this.positions.last - firstPos);
    if (events > 0) for (const wake of this.listeners) wake(events);
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
