import type { PgPool } from '../db/database.postgres';
import { isUnavailable } from '../db/health.postgres';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { selectMembers, type MemberColumns } from './plant.members';
import { EVENT_COLUMNS, toChangeEvent, type ChangeEvent, type ChangeSignal, type EventBounds, type EventRow, type PlantEventLog } from './plant.events';
import { PlantWriter } from './plant.writer';
import type { BatchOutcome, ChangeContext, FoundPlant, PlantRepository, PlantsPage, WriteOutcome } from './plant.repository';
import { GroupCommit, type Queued } from '../db/group-commit';
import { plantJson, plantsJson } from './plant.json';
import { fillSearchKeysPostgres } from './plant.search-keys';
import { claimKeysPostgres, finishKeysPostgres, IdempotencyKeyTaken } from './plant.idempotency-keys';
import { applyWrites, type Applied, type AppliedBatch, type AppliedUnit, type BatchWrite } from './plant.write.postgres';
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

/** A unit's answer as the port gives it: every write's outcome, or its first failure's. */
function unitOutcome(answer: AppliedUnit): BatchOutcome {
  if ('failed' in answer) return { outcome: 'failed', index: answer.failed, result: answerOf(answer.decision, undefined) };
  return { outcome: 'applied', results: answer.unit.map(({ decision, pos }) => answerOf(decision, pos)) };
}

const notMigrated = () => new AppError('store_unavailable', 'The store is not migrated yet; nothing was read or written. Retry later.');

/**
 * Group commit on PostgreSQL: creates, edits and deletes that arrive in one event-loop turn are decided together
 * (plant.write.postgres.ts): the batch's rows read, each write decided by plant.write-rule.ts in arrival order,
 * then the decided rows, events and (given an outbox, webhooks configured) webhook events written in one
 * statement, one transaction that takes the feed's counter and checks the rows read still hold; each caller is
 * answered after that commit (synchronous_commit=on). The counter makes the batches of every replica apply one
 * after the other.
 */
export class PostgresPlantRepository extends PlantWriter implements PlantRepository, PlantEventLog {
  private readonly queue = new GroupCommit<BatchWrite, Applied | AppliedUnit>((batch) => this.keyedInTurn(batch));
  /** Keyed writes that arrived while a keyed transaction was open, committed together when it ends. */
  private keyedHeld: Queued<BatchWrite, Applied | AppliedUnit>[] | undefined;
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
   * that every operation answers 503.
   */
  async markReady(): Promise<void> {
    const keyed = await fillSearchKeysPostgres(this.pool);
    if (keyed > 0) this.logger.info({ plants: keyed }, 'filled the search keys of plants stored before search');
    this.ready = true;
  }

  protected async submit(write: PlantWrite, context: ChangeContext | undefined): Promise<WriteOutcome> {
    const { decision, pos } = (await this.queue.submit({ write, trace: context?.trace, keep: context?.keep })) as Applied;
    return answerOf(decision, pos);
  }

  async batch(writes: readonly PlantWrite[], context?: ChangeContext): Promise<BatchOutcome> {
    return unitOutcome((await this.queue.submit({ unit: writes, trace: context?.trace, keep: context?.keep })) as AppliedUnit);
  }

  /**
   * The JSON text is written here from the row (plant.json.ts), not by PostgreSQL: json_build_object's text puts
   * spaces around its colons, and the two stores answer byte for byte the same body.
   */
  async findById(id: bigint): Promise<FoundPlant | undefined> {
    const { rows } = await this.query<Row & { version: bigint }>('plants_by_id', `SELECT id, ${selectMembers()}, version FROM plants WHERE id = $1`, [id]);
    const row = rows[0];
    return row === undefined ? undefined : { json: plantJson(row), version: row.version };
  }

  /** One statement: the page, the feed position and the count in one snapshot (plant.list.postgres.ts). */
  async list(query: PlantListQuery): Promise<PlantsPage> {
    const { name, text, values } = listStatement(query);
    const { rows } = await this.query<ListRow>(name, text, values);
    const { plants, ...page } = pageOfRows(query, rows);
    return { json: plantsJson(plants), ...page };
  }

  async readEvents(after: bigint, limit: number): Promise<ChangeEvent[]> {
    const { rows } = await this.query<EventRow>(
      'plant_events_after',
      `SELECT ${EVENT_COLUMNS} FROM plant_events WHERE pos > $1 ORDER BY pos LIMIT $2`,
      [after, limit],
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

  /**
   * At most one keyed transaction at a time in this process: it holds the feed counter's row across round trips to
   * the service, so concurrent ones only queue on that row inside PostgreSQL, as many small transactions, each a
   * new version of the row. Keyed writes that arrive meanwhile wait here and commit as one group when it ends (or
   * when its deadline passes). Writes without a key commit at once, as one statement each group.
   */
  private readonly keyedInTurn = (batch: Queued<BatchWrite, Applied | AppliedUnit>[]): void => {
    if (batch.every((queued) => queued.op.keep === undefined)) return this.commit(batch);
    if (this.keyedHeld !== undefined) {
      this.keyedHeld.push(...batch);
      return;
    }
    this.keyedHeld = [];
    this.commit(batch, () => {
      const held = this.keyedHeld ?? [];
      this.keyedHeld = undefined;
      if (held.length > 0) this.keyedInTurn(held);
    });
  };

  private readonly commit = (batch: Queued<BatchWrite, Applied | AppliedUnit>[], ended = () => {}): void => {
    const started = performance.now();
    let settled = false;
    let over = false;
    const end = () => {
      if (over) return;
      over = true;
      ended();
    };
    // The whole wait (a free connection, connecting, the statements) is bounded, so no request outlives it.
    const deadline = setTimeout(() => {
      end();
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
        end();
        if (settled) return;
        const seconds = (performance.now() - started) / 1000;
        this.observer.committed(batch.length, seconds);
        this.logger.debug({ rows: batch.length, ms: Math.round(seconds * 100_000) / 100 }, 'group commit');
        batch.forEach((queued, index) => {
          const result = applied[index];
          if (result === undefined) queued.reject(new IdempotencyKeyTaken());
          else queued.resolve(result);
        });
        if (changed > 0) {
          this.outbox?.wake(changed);
          for (const wake of this.listeners) wake();
        }
      },
      (error: unknown) => {
        clearTimeout(deadline);
        end();
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
   * PostgreSQL. A batch that holds a write sent with Idempotency-Key is a transaction of its own on one
   * connection instead: its keys claimed first, then the writes whose keys were free, then their answers
   * (rendered once the write's positions are known), then COMMIT, so the answer commits with the write or not at
   * all. A write whose key is taken is left out (undefined) while the rest of the batch commits (docs/decisions/api.md).
   */
  private async transaction(batch: BatchWrite[]): Promise<{ applied: (Applied | AppliedUnit | undefined)[]; changed: number }> {
    if (!this.ready) throw notMigrated();
    if (batch.every((entry) => entry.keep === undefined)) return applyWrites(this.pool, batch, Date.now(), this.outbox);
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const keyed = batch.flatMap((entry, index) => (entry.keep === undefined ? [] : [{ keep: entry.keep, index }]));
      const taken = new Set([...(await claimKeysPostgres(client, keyed.map(({ keep }) => keep)))].map((at) => (keyed[at] as { index: number }).index));
      const open = batch.filter((_, index) => !taken.has(index));
      const done: AppliedBatch = open.length === 0 ? { applied: [], changed: 0 } : await applyWrites(client, open, Date.now(), this.outbox);
      const results = done.applied.values();
      const applied = batch.map((_, index) => (taken.has(index) ? undefined : (results.next().value as Applied | AppliedUnit)));
      const kept = batch.flatMap((entry, index) => {
        const result = applied[index];
        if (entry.keep === undefined || result === undefined) return [];
        const outcome = 'write' in entry ? answerOf((result as Applied).decision, (result as Applied).pos) : unitOutcome(result as AppliedUnit);
        return [{ keep: entry.keep, outcome }];
      });
      if (kept.length > 0) await finishKeysPostgres(client, kept);
      await client.query('COMMIT');
      return { applied, changed: done.changed };
    } catch (error) {
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
