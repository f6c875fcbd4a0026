import type Database from 'better-sqlite3';
import type { Db } from '../db/database';
import type { Logger } from '../logger';
import { AppError } from '../errors';
import { isStoreFault, type SqliteHealth } from '../db/sqlite-health';
import type { InsertOutcome, PlantRepository } from './plant.repository';
import type { NewPlant, Plant } from './plant.schemas';

type Row = { name: string; tag: string | null };

const toPlant = (row: Row): Plant => (row.tag === null ? { name: row.name } : { name: row.name, tag: row.tag });

function translate(error: unknown): Error {
  // Matched by name and code, not instanceof: the native addon keeps the SqliteError class of the first
  // module instance that loaded it, so a second one (a jest registry) would never match.
  if (isStoreFault(error)) {
    return new AppError('store_unavailable', undefined, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

type Pending = { plant: NewPlant; resolve: (outcome: InsertOutcome) => void; reject: (error: Error) => void };

/**
 * Group commit: creates that arrive in one event-loop turn share one transaction and so one fsync
 * (synchronous=FULL). Each caller is answered only after the commit that holds its row. A row that fails on
 * its own (a bug, not a full or locked store) fails alone: SQLite undoes just that statement.
 */
export class SqlitePlantRepository implements PlantRepository {
  private pending: Pending[] = [];
  private readonly commitBatch: Database.Transaction<(batch: Pending[]) => (InsertOutcome | Error)[]>;

  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly health: SqliteHealth,
  ) {
    const insert = db.prepare<[bigint, string, string | null]>(
      'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
    );
    const select = db.prepare<[bigint], Row>('SELECT name, tag FROM plants WHERE id = ?');
    // Inside the batch's transaction: no other create can run between the insert and the read.
    const insertOrGet = (plant: NewPlant): InsertOutcome => {
      if (insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
        return { created: true, stored: toPlant({ name: plant.name, tag: plant.tag ?? null }) };
      }
      const row = select.get(plant.id);
      if (row === undefined) throw new Error(`plant ${plant.id} neither inserted nor found`);
      return { created: false, stored: toPlant(row) };
    };
    this.commitBatch = db.transaction((batch: Pending[]) =>
      batch.map(({ plant }) => {
        try {
          return insertOrGet(plant);
        } catch (error) {
          const translated = translate(error);
          // A store that cannot take writes fails the whole batch: rethrown, the transaction rolls back.
          if (translated instanceof AppError) throw error;
          return translated;
        }
      }),
    );
  }

  insertOrGet(plant: NewPlant): Promise<InsertOutcome> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ plant, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    const batch = this.pending;
    this.pending = [];
    const started = performance.now();
    let outcomes: (InsertOutcome | Error)[];
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
      const translated = translate(error);
      for (const { reject } of batch) reject(translated);
      return;
    }
    this.logger.debug({ rows: batch.length, ms: Math.round((performance.now() - started) * 100) / 100 }, 'group commit');
    outcomes.forEach((outcome, index) => {
      const { resolve, reject } = batch[index] as Pending;
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    });
  };
}
