import { SHARED_TENANT, type TenantKey } from '../tenant';
import { ConfigError } from '../config';
import type { TenantsConfig } from '../config/tenants';
import type { PgPool } from '../db/database.postgres';
import { isUnavailable } from '../db/health.postgres';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { selectMembers, type MemberColumns } from './plant.members';
import { EVENT_COLUMNS, toChangeEvent, type ChangeEvent, type ChangeSignal, type EventBounds, type EventRow, type PlantEventLog } from './plant.events';
import { PlantWriter } from './plant.writer';
import type { BatchOutcome, ChangeContext, FoundPlant, PlantRepository, PlantsPage, StoredAnswer, WriteOutcome } from './plant.repository';
import { GroupCommit, type Queued } from '../db/group-commit';
import { plantJson, plantsJson } from './plant.json';
import { fillSearchKeysPostgres } from './plant.search-keys';
import { IdempotencyKeyTaken } from './plant.idempotency-keys';
import { claimKeysFirst, KeysLive, slotOf } from './plant.idempotency-keys.postgres';
import { claimingTransaction, inBatchOrder, repeatsKey, type Settled } from './plant.keyed.postgres';
import { applyWrites, unitOutcome, type Applied, type AppliedUnit, type BatchWrite } from './plant.write.postgres';
import type { ChangeOutboxRows } from '../change-outbox';
import type { PlantListQuery } from './plant.list-query';
import { listStatement, pageOfRows, type ListRow } from './plant.list.postgres';
import { answerOf, type PlantWrite } from './plant.write-rule';
import { ignoreStore, type StoreObserver } from '../observers';

type Row = { id: bigint } & MemberColumns;

function translate(error: unknown): Error {
  if (error instanceof AppError) return error;
  if (isUnavailable(error)) return new AppError('store_unavailable', undefined, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

const notMigrated = () => new AppError('store_unavailable', 'The store is not migrated yet; nothing was read or written. Retry later.');

// An event's columns with its tenant (the feed routes each event to its tenant's streams), whether or not the
// shared list names it.
const EVENTS = /\btenant\b/.test(EVENT_COLUMNS) ? EVENT_COLUMNS : `tenant, ${EVENT_COLUMNS}`;

/**
 * Group commit on PostgreSQL: creates, edits and deletes that arrive in one event-loop turn are decided together
 * (plant.write.postgres.ts): the batch's rows read, each write decided by plant.write-rule.ts in arrival order,
 * then the decided rows, events and (given an outbox, webhooks configured) webhook events written in one
 * statement, one transaction that takes the feed's counter and checks the rows read still hold; each caller is
 * answered after that commit (synchronous_commit=on). The counter makes the batches of every replica apply one
 * after the other.
 */
export class PostgresPlantRepository extends PlantWriter implements PlantRepository, PlantEventLog {
  private readonly queue = new GroupCommit<BatchWrite, Applied | AppliedUnit>((batch) => this.commit(batch));
  private ready = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly pool: PgPool,
    private readonly logger: Logger,
    private readonly deadlineMs: number,
    private readonly observer: StoreObserver = ignoreStore,
    private readonly outbox?: ChangeOutboxRows,
  ) {
    super();
  }

  /**
   * Called once the migrations are applied: fills the search keys they could not compute, then serves; before
   * that every operation answers 503. With tenants on, plants stored in the shared tenant (before tenants) need
   * TENANT_DEFAULT, the tenant that keeps them: without it no caller could reach them, so this throws a
   * ConfigError naming it, and src/store keeps the store unready.
   */
  async markReady(tenants?: TenantsConfig): Promise<void> {
    if (tenants !== undefined && tenants.defaultName === undefined) {
      const { rows } = await this.pool.query<{ shared: boolean }>({
        name: 'plants_shared_exist',
        text: 'SELECT EXISTS (SELECT FROM plants WHERE tenant = $1) AS shared',
        values: [SHARED_TENANT],
      });
      if (rows[0]?.shared === true) {
        throw new ConfigError(
          'TENANT_DEFAULT: the store holds plants stored before tenants were turned on; set TENANT_DEFAULT to the tenant that keeps them (docs/operations.md, "Upgrading to tenants")',
        );
      }
    }
    const keyed = await fillSearchKeysPostgres(this.pool);
    if (keyed > 0) this.logger.info({ plants: keyed }, 'filled the search keys of plants stored before search');
    this.ready = true;
  }

  protected async submit(tenant: TenantKey, write: PlantWrite, context: ChangeContext | undefined): Promise<WriteOutcome> {
    const { decision, pos } = (await this.queue.submit({ write, tenant, trace: context?.trace, keep: context?.keep })) as Applied;
    return answerOf(decision, pos);
  }

  async batch(tenant: TenantKey, writes: readonly PlantWrite[], context?: ChangeContext): Promise<BatchOutcome> {
    return unitOutcome((await this.queue.submit({ unit: writes, tenant, trace: context?.trace, keep: context?.keep })) as AppliedUnit);
  }

  /**
   * The JSON text is written here from the row (plant.json.ts), not by PostgreSQL: json_build_object's text puts
   * spaces around its colons, and the two stores answer byte for byte the same body.
   */
  async findById(tenant: TenantKey, id: bigint): Promise<FoundPlant | undefined> {
    const { rows } = await this.query<Row & { version: bigint }>('plants_by_tenant_id', `SELECT id, ${selectMembers()}, version FROM plants WHERE tenant = $1 AND id = $2`, [tenant, id]);
    const row = rows[0];
    return row === undefined ? undefined : { json: plantJson(row), version: row.version };
  }

  /** One statement: the page, the feed position and the count in one snapshot (plant.list.postgres.ts). */
  async list(tenant: TenantKey, query: PlantListQuery): Promise<PlantsPage> {
    const { name, text, values } = listStatement(tenant, query);
    const { rows } = await this.query<ListRow>(name, text, values);
    const { plants, ...page } = pageOfRows(query, rows);
    return { json: plantsJson(plants), ...page };
  }

  /** Every tenant's events, each with its tenant: the live reader routes them. */
  async readEvents(after: bigint, limit: number): Promise<ChangeEvent[]> {
    const { rows } = await this.query<EventRow>('plant_events_after_tenants', `SELECT ${EVENTS} FROM plant_events WHERE pos > $1 ORDER BY pos LIMIT $2`, [after, limit]);
    return rows.map(toChangeEvent);
  }

  /** One tenant's events after a position (a stream's catch-up), on plant_events_by_tenant (tenant, pos). */
  async readTenantEvents(tenant: TenantKey, after: bigint, limit: number): Promise<ChangeEvent[]> {
    const { rows } = await this.query<EventRow>(
      'plant_events_of_tenant',
      `SELECT ${EVENTS} FROM plant_events WHERE tenant = $1 AND pos > $2 ORDER BY pos LIMIT $3`,
      [tenant, after, limit],
    );
    return rows.map(toChangeEvent);
  }

  async eventBounds(resumeAfter?: bigint): Promise<EventBounds> {
    // Positions a restore jumped over (migrations/postgres/007): the replaced database may have handed them out.
    const { rows } = await this.query<{ oldest: bigint | null; last: bigint; unwritten: boolean }>(
      'plant_events_bounds',
      'SELECT (SELECT min(pos) FROM plant_events) AS oldest, (SELECT last_pos FROM plant_event_counter) AS last, ' +
        'EXISTS (SELECT 1 FROM plant_event_restores r WHERE r.restored_last < $1::bigint AND r.mark > $1::bigint) AS unwritten',
      [resumeAfter ?? null],
    );
    const row = rows[0];
    if (row === undefined) return { last: 0n };
    const bounds: EventBounds = row.oldest === null ? { last: row.last } : { oldest: row.oldest, last: row.last };
    if (row.unwritten) bounds.unwritten = true;
    return bounds;
  }

  async pruneEvents(beforeMs: number, limit: number): Promise<number> {
    const result = await this.query(
      'plant_events_prune',
      'DELETE FROM plant_events WHERE pos IN (SELECT pos FROM plant_events ORDER BY pos LIMIT $1) AND at < $2',
      [limit, beforeMs],
    );
    return (result as { rowCount?: number | null }).rowCount ?? 0;
  }

  /** This replica's own commits; src/store adds the other replicas' (LISTEN plant_events). */
  readonly changes: ChangeSignal = (wake) => {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  };

  private async query<R extends object>(name: string, text: string, values: unknown[]): Promise<{ rows: R[] }> {
    if (!this.ready) throw notMigrated();
    try {
      return await this.pool.query<R>({ name, text, values });
    } catch (error) {
      throw translate(error);
    }
  }

  private readonly commit = (batch: Queued<BatchWrite, Applied | AppliedUnit>[]): void => {
    const started = performance.now();
    let settled = false;
    // The whole wait (a free connection, connecting, the statements) is bounded, so no request outlives it.
    const deadline = setTimeout(() => {
      settled = true;
      // Counted as a timeout of its own: no driver error exists yet, and the transaction may still commit.
      this.observer.failed(Object.assign(new Error('no answer within DATABASE_STATEMENT_TIMEOUT_MS'), { code: 'ETIMEDOUT' }));
      const error = new AppError(
        'store_unavailable',
        'The store did not answer in time; the change may or may not be applied. Resend the same request to find out.',
      );
      for (const queued of batch) queued.reject(error);
    }, this.deadlineMs);
    this.transaction(batch.map((queued) => queued.op)).then(
      ({ applied, changed }) => {
        clearTimeout(deadline);
        if (settled) return;
        const seconds = (performance.now() - started) / 1000;
        this.observer.committed(batch.length, seconds);
        this.logger.debug({ rows: batch.length, ms: Math.round(seconds * 100_000) / 100 }, 'group commit');
        batch.forEach((queued, index) => {
          const result = applied[index] as Settled['applied'][number];
          if (result instanceof IdempotencyKeyTaken) queued.reject(result);
          else queued.resolve(result);
        });
        if (changed > 0) {
          this.outbox?.wake(changed);
          for (const wake of this.listeners) wake();
        }
      },
      (error: unknown) => {
        clearTimeout(deadline);
        if (settled) return;
        // The driver's own error (its SQLSTATE or errno), not the 503 it becomes; a not-migrated store has none.
        this.observer.failed(error instanceof AppError && error.cause !== undefined ? error.cause : error);
        const translated = translate(error);
        for (const queued of batch) queued.reject(translated);
      },
    );
  };

  /**
   * One batch on the pool: its write is one statement, so one transaction that holds the counter only inside
   * PostgreSQL. The answers of its writes sent with Idempotency-Key are stored by that same statement
   * (applyWrites' `keyed`), so the answer commits with the write or not at all. When one of those keys turns out
   * holding an answer (a request sent again), the statement wrote nothing and returned those answers: those
   * writes replay them, and the rest of the batch is applied again. When a key turns live meanwhile, or one of
   * those writes fails or changes nothing (its key is checked all the same), nothing was written, and the batch
   * runs again as claimingTransaction.
   */
  private async transaction(batch: BatchWrite[]): Promise<Settled> {
    if (!this.ready) throw notMigrated();
    if (batch.every((entry) => entry.keep === undefined)) return applyWrites(this.pool, batch, Date.now(), this.outbox);
    if (repeatsKey(batch)) return claimingTransaction(this.pool, batch, this.outbox);
    try {
      return await applyWrites(this.pool, batch, Date.now(), this.outbox, true);
    } catch (error) {
      if (error instanceof KeysLive) return this.withoutLive(batch, error.answers);
      if (!claimKeysFirst(error)) throw error;
    }
    return claimingTransaction(this.pool, batch, this.outbox);
  }

  /** The writes whose keys hold answers are taken, with those answers; the rest of the batch is applied again. */
  private async withoutLive(batch: BatchWrite[], answers: Map<string, StoredAnswer>): Promise<Settled> {
    const storedOf = ({ tenant, keep }: BatchWrite) => (keep === undefined ? undefined : answers.get(slotOf(tenant, keep)));
    const rest = batch.filter((entry) => storedOf(entry) === undefined);
    const done: Settled = rest.length === 0 ? { applied: [], changed: 0 } : await this.transaction(rest);
    const takenOf = (entry: BatchWrite) => {
      const stored = storedOf(entry);
      return stored === undefined ? undefined : new IdempotencyKeyTaken(stored);
    };
    return { applied: inBatchOrder(batch, takenOf, done.applied), changed: done.changed };
  }
}
