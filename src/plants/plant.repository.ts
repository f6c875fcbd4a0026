import type Database from 'better-sqlite3';
import type { Db } from '../db/database';
import { AppError } from '../errors';
import type { NewPlant, Plant } from './plant.schemas';

type Row = { name: string; tag: string | null };

const toPlant = (row: Row): Plant => (row.tag === null ? { name: row.name } : { name: row.name, tag: row.tag });

// Conditions that say "not now" rather than "bug": the caller may retry later.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY)/;

function translate(error: unknown): Error {
  // Matched by name and code, not instanceof: the native addon keeps the SqliteError class of the first
  // module instance that loaded it, so a second one (a jest registry) would never match.
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  if (name === 'SqliteError' && typeof code === 'string' && UNAVAILABLE.test(code)) {
    return new AppError('store_unavailable', undefined, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

export type InsertOutcome = { created: boolean; stored: Plant };

export class PlantRepository {
  private readonly insertOrGetTx: Database.Transaction<(plant: NewPlant) => InsertOutcome>;

  constructor(db: Db) {
    const insert = db.prepare<[bigint, string, string | null]>(
      'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
    );
    const select = db.prepare<[bigint], Row>('SELECT name, tag FROM plants WHERE id = ?');
    // One synchronous transaction: no other create can run between the insert and the read.
    this.insertOrGetTx = db.transaction((plant: NewPlant): InsertOutcome => {
      if (insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
        return { created: true, stored: toPlant({ name: plant.name, tag: plant.tag ?? null }) };
      }
      const row = select.get(plant.id);
      if (row === undefined) throw new Error(`plant ${plant.id} neither inserted nor found`);
      return { created: false, stored: toPlant(row) };
    });
  }

  /**
   * Inserts the plant unless its id exists; either way answers what is stored under the id, once committed.
   * A Promise although the driver is synchronous: the contract stays the same for an asynchronous store.
   */
  insertOrGet(plant: NewPlant): Promise<InsertOutcome> {
    try {
      return Promise.resolve(this.insertOrGetTx.immediate(plant));
    } catch (error) {
      return Promise.reject(translate(error));
    }
  }
}
