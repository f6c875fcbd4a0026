import type Database from 'better-sqlite3';
import type { Db } from '../db/database';
import type { Logger } from '../logger';
import { AppError } from '../errors';
import { isStoreFault, type SqliteHealth } from '../db/sqlite-health';
import type { ChangeEvent, ChangeSignal, EventBounds, PlantEventLog } from './plant-events';
import { SqliteEventLog } from './plant-events.sqlite';
import { deletedPlantJson, plantJson, plantJsonSqlite } from './plant.json';
import type {
  ChangeContext,
  DeleteOutcome,
  Expected,
  FoundPlant,
  InsertOutcome,
  PlantPatch,
  PlantRepository,
  PlantsPage,
  UpdateOutcome,
} from './plant.repository';
import type { ChangeOutbox } from '../change-outbox';
import type { ListQuery, NewPlant, Plant } from './plant.schemas';
import { ignoreStore, type StoreObserver } from './store-observer';

type Row = { name: string; tag: string | null; version: bigint };

const toPlant = (row: Pick<Row, 'name' | 'tag'>): Plant => (row.tag === null ? { name: row.name } : { name: row.name, tag: row.tag });

// A plant as JSON text, written by SQLite: plantJson's bytes (plant.json.ts), with no row object per plant.
const PLANT_JSON = plantJsonSqlite({ id: 'id', name: 'name', tag: 'tag' });

/** A page's plants, each as its JSON text: `where` picks the rows, the last parameter is the limit. */
const pageSql = (where: string) => `SELECT ${PLANT_JSON} FROM plants ${where} ORDER BY id LIMIT ?`;
// Every plant's text starts with its id: {"id":<digits>,…
const ID_START = '{"id":'.length;
const idOf = (json: string): bigint => BigInt(json.slice(ID_START, json.indexOf(',', ID_START)));

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

// One write of a batch, answered with its own outcome.
type Pending =
  | { kind: 'c'; plant: NewPlant; context?: ChangeContext; resolve: (outcome: InsertOutcome) => void; reject: (error: Error) => void }
  | { kind: 'u'; id: bigint; patch: PlantPatch; expected?: Expected; context?: ChangeContext; resolve: (outcome: UpdateOutcome) => void; reject: (error: Error) => void }
  | { kind: 'd'; id: bigint; expected?: Expected; context?: ChangeContext; resolve: (outcome: DeleteOutcome) => void; reject: (error: Error) => void };
type Outcome = InsertOutcome | UpdateOutcome | DeleteOutcome;

const matches = (expected: Expected | undefined, version: bigint) => expected === undefined || expected.includes(version);

/** The write statements, prepared once; each runs inside a batch's transaction. */
function prepareWrites(db: Db) {
  return {
    insert: db.prepare<[bigint, string, string | null, bigint]>('INSERT INTO plants (id, name, tag, version) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING'),
    select: db.prepare<[bigint], Row>('SELECT name, tag, version FROM plants WHERE id = ?'),
    update: db.prepare<[string, string | null, bigint, bigint]>('UPDATE plants SET name = ?, tag = ?, version = ? WHERE id = ?'),
    remove: db.prepare<[bigint]>('DELETE FROM plants WHERE id = ?'),
  };
}

/** The repository's position counter: the next position to be taken, and taking it for an event. */
type Positions = { next: () => bigint; record: (event: Omit<ChangeEvent, 'pos'>) => bigint };

/** One write's change and event, run inside the batch's transaction: no other write can run between a check and its change. */
function writeApplier({ insert, select, update, remove }: ReturnType<typeof prepareWrites>, positions: Positions, outbox?: ChangeOutbox) {
  return (write: Pending, at: number): Outcome => {
    if (write.kind === 'c') {
      const { plant } = write;
      if (insert.run(plant.id, plant.name, plant.tag ?? null, positions.next()).changes === 1) {
        const version = positions.record({ kind: 'created', id: plant.id, name: plant.name, tag: plant.tag, at });
        // Transactional outbox: the plant's webhook events commit or roll back with it.
        outbox?.record({ type: 'plant.created', subject: plant.id, data: plantJson(plant), bare: true, trace: write.context?.trace });
        return { created: true, stored: toPlant({ name: plant.name, tag: plant.tag ?? null }), version };
      }
      const row = select.get(plant.id);
      if (row === undefined) throw new Error(`plant ${plant.id} neither inserted nor found`);
      return { created: false, stored: toPlant(row), version: row.version };
    }
    const row = select.get(write.id);
    if (row === undefined) return write.kind === 'u' ? { outcome: 'missing' } : 'missing';
    if (!matches(write.expected, row.version)) return write.kind === 'u' ? { outcome: 'stale', version: row.version } : 'stale';
    const tag = row.tag ?? undefined;
    if (write.kind === 'd') {
      remove.run(write.id);
      positions.record({ kind: 'deleted', id: write.id, tag, at });
      outbox?.record({ type: 'plant.deleted', subject: write.id, data: deletedPlantJson(write.id), trace: write.context?.trace });
      return 'deleted';
    }
    const name = write.patch.name ?? row.name;
    const next = write.patch.tag === undefined ? tag : (write.patch.tag ?? undefined);
    const version = positions.next();
    update.run(name, next ?? null, version, write.id);
    positions.record({ kind: 'updated', id: write.id, name, tag: next, prevTag: tag, at });
    const stored = next === undefined ? { id: write.id, name } : { id: write.id, name, tag: next };
    outbox?.record({ type: 'plant.updated', subject: write.id, data: plantJson(stored), trace: write.context?.trace });
    return { outcome: 'updated', stored, version };
  };
}

/**
 * Group commit: creates, edits and deletes that arrive in one event-loop turn share one transaction and so one
 * fsync (synchronous=FULL), applied in arrival order, each with its change event. Each caller is answered only
 * after the commit that holds its write. A write that fails on its own (a bug, not a full or locked store) fails
 * alone: its savepoint undoes the change and its event together. Reads are plain synchronous SELECTs on the same
 * connection: they run between commits, never inside one, so a read waits at most for the commit already running.
 * Positions are counted here (`lastPos`), taken from the file's record at the start of each batch (an import may
 * have written events since), and put back when a write rolls back.
 */
export class SqlitePlantRepository implements PlantRepository, PlantEventLog {
  private pending: Pending[] = [];
  private readonly commitBatch: Database.Transaction<(batch: Pending[]) => (Outcome | Error)[]>;
  private readonly byId: Database.Statement<[bigint], { json: string; version: bigint }>;
  private readonly first: Database.Statement<[number], string>;
  private readonly after: Database.Statement<[bigint, number], string>;
  private readonly firstOfTag: Database.Statement<[string, number], string>;
  private readonly afterOfTag: Database.Statement<[string, bigint, number], string>;
  private readonly events: SqliteEventLog;
  private lastPos: bigint;
  private readonly listeners = new Set<() => void>();

  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly health: SqliteHealth,
    private readonly observer: StoreObserver = ignoreStore,
    outbox?: ChangeOutbox,
  ) {
    this.events = new SqliteEventLog(db);
    this.lastPos = this.events.lastWritten();
    this.byId = db.prepare<[bigint], { json: string; version: bigint }>(`SELECT ${PLANT_JSON} AS json, version FROM plants WHERE id = ?`);
    // Keyset paging: each page is a range scan of the rowid (or of plants_by_tag), whatever its depth.
    // Rows of one string each, joined here: cheaper than json_group_array, and in the statement's own order.
    this.first = db.prepare<[number], string>(pageSql('')).pluck();
    this.after = db.prepare<[bigint, number], string>(pageSql('WHERE id > ?')).pluck();
    this.firstOfTag = db.prepare<[string, number], string>(pageSql('WHERE tag = ?')).pluck();
    this.afterOfTag = db.prepare<[string, bigint, number], string>(pageSql('WHERE tag = ? AND id > ?')).pluck();
    const positions: Positions = {
      next: () => this.lastPos + 1n,
      record: (event) => {
        this.lastPos += 1n;
        this.events.write({ ...event, pos: this.lastPos });
        return this.lastPos;
      },
    };
    // A nested transaction is a savepoint: a write that throws takes its event (and its position) back with it.
    const applyOne = db.transaction(writeApplier(prepareWrites(db), positions, outbox));
    this.commitBatch = db.transaction((batch: Pending[]) => {
      // Read again under the write lock: `plant-store import` numbers the events it writes after the same record.
      this.lastPos = this.events.lastWritten();
      const at = Date.now();
      return batch.map((write) => {
        const before = this.lastPos;
        try {
          return applyOne(write, at);
        } catch (error) {
          this.lastPos = before;
          const translated = translate(error);
          // A store that cannot take writes fails the whole batch: rethrown, the transaction rolls back.
          if (translated instanceof AppError) throw error;
          return translated;
        }
      });
    });
  }

  insertOrGet(plant: NewPlant, context?: ChangeContext): Promise<InsertOutcome> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'c', plant, context, resolve, reject }));
  }

  update(id: bigint, patch: PlantPatch, expected?: Expected, context?: ChangeContext): Promise<UpdateOutcome> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'u', id, patch, expected, context, resolve, reject }));
  }

  delete(id: bigint, expected?: Expected, context?: ChangeContext): Promise<DeleteOutcome> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'd', id, expected, context, resolve, reject }));
  }

  // Reads answer at once: a synchronous SELECT, wrapped in the promise the store contract asks for.
  findById(id: bigint): Promise<FoundPlant | undefined> {
    try {
      return Promise.resolve(this.byId.get(id));
    } catch (error) {
      return Promise.reject(translateRead(error));
    }
  }

  list({ limit, after, tag }: ListQuery): Promise<PlantsPage> {
    try {
      // One row more than the page: when it comes back, another page follows.
      let plants: string[];
      if (tag === undefined) plants = after === undefined ? this.first.all(limit + 1) : this.after.all(after, limit + 1);
      else plants = after === undefined ? this.firstOfTag.all(tag, limit + 1) : this.afterOfTag.all(tag, after, limit + 1);
      const more = plants.length > limit;
      if (more) plants.length = limit;
      const last = plants[plants.length - 1];
      const json = `[${plants.join(',')}]`;
      return Promise.resolve(more && last !== undefined ? { json, nextAfter: idOf(last) } : { json });
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

  private enqueue(write: Pending): void {
    if (this.pending.push(write) === 1) setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    const batch = this.pending;
    this.pending = [];
    const started = performance.now();
    const firstPos = this.lastPos;
    let outcomes: (Outcome | Error)[];
    try {
      this.health.verifyFile();
      outcomes = this.commitBatch.immediate(batch);
      this.health.committed();
    } catch (error) {
      this.lastPos = firstPos;
      const retryInMs = this.health.retryDelay(error);
      if (retryInMs !== undefined) {
        this.pending = batch.concat(this.pending);
        setTimeout(this.flush, retryInMs);
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
      const { resolve, reject } = batch[index] as Pending;
      if (outcome instanceof Error) reject(outcome);
      else (resolve as (outcome: Outcome) => void)(outcome);
    });
    if (this.lastPos !== firstPos) for (const wake of this.listeners) wake();
  };
}
