/**
 * One plant write on SQLite, as the repository's group commit and `plant-store import` both apply it: read the
 * row, decide with plant.write-rule.ts, write what is decided with its change event (whose position is the plant's
 * new version) and, given an outbox, its webhook event. Runs inside the caller's transaction, so a read sees the
 * batch's own earlier writes; SQL only, no rule.
 */
import type { TenantKey } from '../tenant';
import type { ChangeOutbox } from '../change-outbox';
import type { Db } from '../db/database.sqlite';
import type { TraceContext } from '../tracing';
import type { SqliteEventLog } from './plant.events.sqlite';
import { changeEntry } from './plant.outbox';
import { columnOf, columnValues, DERIVED_COLUMNS, derivedValues, MEMBERS, selectMembers, timeText, type MemberColumns } from './plant.members';
import type { WriteOutcome } from './plant.repository';
import { answerOf, decideWrite, idOf, plantRowOf, type PlantWrite } from './plant.write-rule';

type Row = MemberColumns & { version: bigint };

/** A write and the trace its webhook event carries, when it has one. */
export type ChangeWrite = PlantWrite & { trace?: TraceContext };

/**
 * The last position taken: each event takes the next. Its owner sets it before a transaction (from the file's
 * record) and puts it back when a write rolls back.
 */
export type Positions = { last: bigint };

/** Applies one write inside `tenant` at `at` (Unix ms, the event's time) and answers its outcome. */
export type ApplyChange = (write: ChangeWrite, tenant: TenantKey, at: number) => WriteOutcome;

/** The statements are prepared here, once: call it once per connection, after the migrations. */
export function sqliteChangeApplier(db: Db, events: SqliteEventLog, positions: Positions, outbox?: ChangeOutbox): ApplyChange {
  // Every statement names the tenant: a plant of another tenant is exactly a missing one (the key is (tenant, id)).
  const select = db.prepare<[TenantKey, bigint], Row>(`SELECT ${selectMembers()}, version FROM plants WHERE tenant = ? AND id = ?`);
  const columns = [...MEMBERS.map(columnOf), ...DERIVED_COLUMNS];
  const insert = db.prepare<unknown[]>(`INSERT INTO plants (tenant, id, ${columns.join(', ')}, version) VALUES (?, ?, ${columns.map(() => '?, ').join('')}?)`);
  const update = db.prepare<unknown[]>(`UPDATE plants SET ${columns.map((column) => `${column} = ?, `).join('')}version = ? WHERE tenant = ? AND id = ?`);
  const remove = db.prepare<[TenantKey, bigint]>('DELETE FROM plants WHERE tenant = ? AND id = ?');
  // The batch's time as plants carry it, written once per batch rather than once per write.
  let time = { ms: Number.NaN, text: '' };
  return (write, tenant, at) => {
    if (time.ms !== at) time = { ms: at, text: timeText(at) };
    const id = idOf(write);
    const row = select.get(tenant, id);
    const current = row === undefined ? undefined : plantRowOf(id, row, row.version);
    const decision = decideWrite(current, write, time.text);
    if (!('event' in decision)) return answerOf(decision, undefined);
    const version = positions.last + 1n;
    if ('remove' in decision) remove.run(tenant, decision.remove);
    else if (current === undefined) insert.run(tenant, id, ...columnValues(decision.put), ...derivedValues(decision.put), version);
    else update.run(...columnValues(decision.put), ...derivedValues(decision.put), version, tenant, id);
    events.write(tenant, decision.event, version, at);
    positions.last = version;
    if (outbox !== undefined) {
      // Transactional outbox: the change's webhook events commit or roll back with it.
      const entry = changeEntry(decision, write.trace);
      if (entry !== undefined) outbox.record(Object.assign(entry, { tenant }));
    }
    return answerOf(decision, version);
  };
}
