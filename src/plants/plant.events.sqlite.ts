import type Database from 'better-sqlite3';
import type { Db } from '../db/database.sqlite';
import type { TenantKey } from '../tenant';
import { columnValues } from './plant.members';
import { EVENT_COLUMNS, EVENT_INSERT_COLUMNS, toChangeEvent, type ChangeEvent, type EventBounds, type EventRow } from './plant.events';

// Every read returns the tenant of each event: the live reader routes events to their tenant's streams.
const READ_COLUMNS = `tenant, ${EVENT_COLUMNS}`;

/**
 * The plant_events table of migrations/sqlite/005 (tenant: 012) on the repository's own connection: written inside
 * its group commit, read between commits. Positions are store-wide: the feed's reader reads every tenant's events
 * in one order, a stream's catch-up only its tenant's (plant_events_by_tenant). SQL only.
 */
export class SqliteEventLog {
  private readonly insert: Database.Statement<unknown[]>;
  private readonly after: Database.Statement<[bigint, number], EventRow>;
  private readonly tenantAfter: Database.Statement<[TenantKey, bigint, number], EventRow>;
  private readonly oldest: Database.Statement<[], bigint | null>;
  private readonly sequence: Database.Statement<[], bigint | undefined>;
  private readonly pruneSome: Database.Statement<[number, number]>;
  private readonly skipped: Database.Statement<[bigint, bigint], number>;

  constructor(db: Db) {
    const places = EVENT_INSERT_COLUMNS.split(',').map(() => '?').join(', ');
    this.insert = db.prepare<unknown[]>(`INSERT INTO plant_events (${EVENT_INSERT_COLUMNS}) VALUES (${places})`);
    this.after = db.prepare<[bigint, number], EventRow>(`SELECT ${READ_COLUMNS} FROM plant_events WHERE pos > ? ORDER BY pos LIMIT ?`);
    this.tenantAfter = db.prepare<[TenantKey, bigint, number], EventRow>(`SELECT ${READ_COLUMNS} FROM plant_events WHERE tenant = ? AND pos > ? ORDER BY pos LIMIT ?`);
    this.oldest = db.prepare<[], bigint | null>('SELECT min(pos) FROM plant_events').pluck();
    // AUTOINCREMENT's own record of the largest position ever used: it outlives the rows pruning removes.
    this.sequence = db.prepare<[], bigint | undefined>("SELECT seq FROM sqlite_sequence WHERE name = 'plant_events'").pluck();
    // Positions a restore jumped over (migrations/sqlite/007): the replaced store may have handed them out.
    this.skipped = db.prepare<[bigint, bigint], number>('SELECT 1 FROM plant_event_restores WHERE restored_last < ? AND mark > ? LIMIT 1').pluck();
    // From the oldest: positions follow commit time, so the walk stops at the first event still kept.
    this.pruneSome = db.prepare<[number, number]>(
      'DELETE FROM plant_events WHERE pos IN (SELECT pos FROM plant_events ORDER BY pos LIMIT ?) AND at < ?',
    );
  }

  lastWritten(): bigint {
    return this.sequence.get() ?? 0n;
  }

  /** Writes the tenant's event at `pos`, time `at` (Unix ms). */
  write(tenant: TenantKey, event: Omit<ChangeEvent, 'pos' | 'at' | 'tenant'>, pos: bigint, at: number): void {
    this.insert.run(tenant, pos, event.kind, event.id, ...columnValues(event), event.prevName ?? null, event.prevTag ?? null, at);
  }

  read(after: bigint, limit: number): ChangeEvent[] {
    return this.after.all(after, limit).map(toChangeEvent);
  }

  readTenant(tenant: TenantKey, after: bigint, limit: number): ChangeEvent[] {
    return this.tenantAfter.all(tenant, after, limit).map(toChangeEvent);
  }

  bounds(resumeAfter?: bigint): EventBounds {
    const oldest = this.oldest.get() ?? null;
    const last = this.lastWritten();
    const bounds: EventBounds = oldest === null ? { last } : { oldest, last };
    if (resumeAfter !== undefined && this.skipped.get(resumeAfter, resumeAfter) !== undefined) bounds.unwritten = true;
    return bounds;
  }

  prune(beforeMs: number, limit: number): number {
    return this.pruneSome.run(limit, beforeMs).changes;
  }
}
