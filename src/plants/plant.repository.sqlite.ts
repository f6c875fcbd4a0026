import type Database from 'better-sqlite3';
import type { Db } from '../db/database';
import type { Logger } from '../logger';
import { AppError } from '../errors';
import { isStoreFault, type SqliteHealth } from '../db/sqlite-health';
import type { CreateContext, InsertOutcome, PlantRepository, PlantsPage } from './plant.repository';
import type { PlantOutbox } from './plant.outbox';
import type { ListQuery, NewPlant, Plant } from './plant.schemas';
import { ignoreStore, type StoreObserver } from './store-observer';

type Row = { name: string; tag: string | null };

const toPlant = (row: Row): Plant => (row.tag === null ? { name: row.name } : { name: row.name, tag: row.tag });

// A plant as JSON text, written by SQLite: integers digit for digit, strings escaped as JSON requires.
const PLANT_JSON = "CASE WHEN tag IS NULL THEN json_object('id', id, 'name', name) ELSE json_object('id', id, 'name', name, 'tag', tag) END";

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

// One write of a batch: a create (plant) or a delete (deleteId), answered with its own outcome.
type Pending =
  | { plant: NewPlant; context?: CreateContext; resolve: (outcome: InsertOutcome) => void; reject: (error: Error) => void }
  | { deleteId: bigint; resolve: (deleted: boolean) => void; reject: (error: Error) => void };
type Outcome = InsertOutcome | boolean;

/**
 * Group commit: creates and deletes that arrive in one event-loop turn share one transaction and so one fsync
 * (synchronous=FULL), applied in arrival order. Each caller is answered only after the commit that holds its
 * write. A write that fails on its own (a bug, not a full or locked store) fails alone: SQLite undoes just
 * that statement. Reads are plain synchronous SELECTs on the same connection: they run between commits,
 * never inside one, so a read waits at most for the one commit already running.
 */
export class SqlitePlantRepository implements PlantRepository {
  private pending: Pending[] = [];
  private readonly commitBatch: Database.Transaction<(batch: Pending[]) => (Outcome | Error)[]>;
  private readonly byId: Database.Statement<[bigint], string>;
  private readonly first: Database.Statement<[number], string>;
  private readonly after: Database.Statement<[bigint, number], string>;
  private readonly firstOfTag: Database.Statement<[string, number], string>;
  private readonly afterOfTag: Database.Statement<[string, bigint, number], string>;

  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly health: SqliteHealth,
    private readonly observer: StoreObserver = ignoreStore,
    outbox?: PlantOutbox,
  ) {
    const insert = db.prepare<[bigint, string, string | null]>(
      'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
    );
    const select = db.prepare<[bigint], Row>('SELECT name, tag FROM plants WHERE id = ?');
    const remove = db.prepare<[bigint]>('DELETE FROM plants WHERE id = ?');
    this.byId = db.prepare<[bigint], string>(`SELECT ${PLANT_JSON} FROM plants WHERE id = ?`).pluck();
    // Keyset paging: each page is a range scan of the rowid (or of plants_by_tag), whatever its depth.
    // Rows of one string each, joined here: cheaper than json_group_array, and in the statement's own order.
    this.first = db.prepare<[number], string>(pageSql('')).pluck();
    this.after = db.prepare<[bigint, number], string>(pageSql('WHERE id > ?')).pluck();
    this.firstOfTag = db.prepare<[string, number], string>(pageSql('WHERE tag = ?')).pluck();
    this.afterOfTag = db.prepare<[string, bigint, number], string>(pageSql('WHERE tag = ? AND id > ?')).pluck();
    // Inside the batch's transaction: no other create can run between the insert and the read.
    const insertOrGet = (plant: NewPlant, context: CreateContext | undefined): InsertOutcome => {
      if (insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
        // Transactional outbox: the plant's events commit or roll back with it (a failure here fails the batch).
        outbox?.recordCreated(plant, context?.trace);
        return { created: true, stored: toPlant({ name: plant.name, tag: plant.tag ?? null }) };
      }
      const row = select.get(plant.id);
      if (row === undefined) throw new Error(`plant ${plant.id} neither inserted nor found`);
      return { created: false, stored: toPlant(row) };
    };
    this.commitBatch = db.transaction((batch: Pending[]) =>
      batch.map((write) => {
        try {
          return 'plant' in write ? insertOrGet(write.plant, write.context) : remove.run(write.deleteId).changes === 1;
        } catch (error) {
          const translated = translate(error);
          // A store that cannot take writes fails the whole batch: rethrown, the transaction rolls back.
          if (translated instanceof AppError) throw error;
          return translated;
        }
      }),
    );
  }

  insertOrGet(plant: NewPlant, context?: CreateContext): Promise<InsertOutcome> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ plant, context, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  delete(id: bigint): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ deleteId: id, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  // Reads answer at once: a synchronous SELECT, wrapped in the promise the store contract asks for.
  findById(id: bigint): Promise<string | undefined> {
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

  private readonly flush = (): void => {
    const batch = this.pending;
    this.pending = [];
    const started = performance.now();
    let outcomes: (Outcome | Error)[];
    try {
      this.health.verifyFile();
      outcomes = this.commitBatch.immediate(batch);
      this.health.committed();
    } catch (error) {
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
  };
}
