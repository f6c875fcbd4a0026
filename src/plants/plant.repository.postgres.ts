import type { PgPool } from '../db/postgres';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import type { CreateContext, InsertOutcome, PlantRepository, PlantsPage, StoredPlant } from './plant.repository';
import { plantJson, plantsJson } from './plant.json';
import type { PostgresPlantOutbox } from './plant.outbox';
import { INT64_MAX, INT64_MIN, type ListQuery, type NewPlant, type Plant } from './plant.schemas';
import { ignoreStore, type StoreObserver } from './store-observer';

type Row = { id: bigint; name: string; tag: string | null };
type ApplyRow = { idx: number; created: boolean; deleted: boolean; stored_name: string | null; stored_tag: string | null };

const toPlant = (name: string, tag: string | null): Plant => (tag === null ? { name } : { name, tag });
const toStored = (row: Row): StoredPlant => (row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag });

// SQLSTATE classes and codes that say "not now" rather than "bug": 08 connection exception, 53 insufficient
// resources, 57 operator intervention (admin shutdown, cannot connect now, statement timeout), 40001 and 40P01
// (serialization failure, deadlock), 25006 (read-only transaction: a replica or a failover in progress).
const UNAVAILABLE_SQLSTATE = /^(08|53|57|40001|40P01|25006)/;
// Errors node-postgres raises itself, with no SQLSTATE: the socket, the connect timeout, the query timeout.
const UNAVAILABLE_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/** A driver error that means PostgreSQL cannot be reached or cannot work now, as opposed to a bug. */
export function isUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

function translate(error: unknown): Error {
  if (error instanceof AppError) return error;
  if (isUnavailable(error)) return new AppError('store_unavailable', undefined, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

type Pending =
  | { kind: 'c'; id: bigint; plant: NewPlant; context?: CreateContext; resolve: (outcome: InsertOutcome) => void; reject: (error: Error) => void }
  | { kind: 'd'; id: bigint; resolve: (deleted: boolean) => void; reject: (error: Error) => void };

/**
 * Group commit on PostgreSQL: creates and deletes that arrive in one event-loop turn go to the server as one
 * call of plants_apply (migrations/postgres/001) in one statement, so one transaction and one round trip; each
 * caller is answered after that commit (synchronous_commit=on). Operations on one id keep their arrival order;
 * across ids the batch is sorted by id so that two replicas' batches lock rows in the same order. Given an outbox
 * (webhooks configured), the same statement also writes the created plants' events (a transactional outbox),
 * still one round trip; without, the statement is plants_apply alone and nothing more is written.
 */
export class PostgresPlantRepository implements PlantRepository {
  private pending: Pending[] = [];
  private ready = false;

  constructor(
    private readonly pool: PgPool,
    private readonly logger: Logger,
    private readonly deadlineMs: number,
    private readonly observer: StoreObserver = ignoreStore,
    private readonly outbox?: PostgresPlantOutbox,
  ) {}

  /** Called once the migrations are applied; before that every operation answers 503. */
  markReady(): void {
    this.ready = true;
  }

  insertOrGet(plant: NewPlant, context?: CreateContext): Promise<InsertOutcome> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'c', id: plant.id, plant, context, resolve, reject }));
  }

  /** Resolves after the delete is committed: true when a plant was deleted, false when none had the id. */
  delete(id: bigint): Promise<boolean> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'd', id, resolve, reject }));
  }

  /**
   * The JSON text is written here from the row (plant.json.ts), not by PostgreSQL: json_build_object's text puts
   * spaces around its colons, and the two stores answer byte for byte the same body.
   */
  async findById(id: bigint): Promise<string | undefined> {
    const { rows } = await this.query<Row>('plants_by_id', 'SELECT id, name, tag FROM plants WHERE id = $1', [id]);
    return rows[0] === undefined ? undefined : plantJson(toStored(rows[0]));
  }

  /** Ascending id, ids greater than `after` when given, only `tag` when given, at most `limit` plants. */
  async list(query: ListQuery): Promise<PlantsPage> {
    // One statement per shape, not `($1 IS NULL OR id > $1)`: a prepared statement's generic plan could not
    // start its index scan at the cursor, and a deep page would read every row before it.
    if (query.after === INT64_MAX) return { json: '[]' };
    const from = query.after === undefined ? INT64_MIN : query.after + 1n;
    // One row more than the page: when it comes back, another page follows.
    const { rows } =
      query.tag === undefined
        ? await this.query<Row>('plants_list', 'SELECT id, name, tag FROM plants WHERE id >= $1 ORDER BY id LIMIT $2', [from, query.limit + 1])
        : await this.query<Row>('plants_list_by_tag', 'SELECT id, name, tag FROM plants WHERE tag = $1 AND id >= $2 ORDER BY tag, id LIMIT $3', [
            query.tag,
            from,
            query.limit + 1,
          ]);
    const more = rows.length > query.limit;
    if (more) rows.length = query.limit;
    const plants = rows.map(toStored);
    const last = plants[plants.length - 1];
    return more && last !== undefined ? { json: plantsJson(plants), nextAfter: last.id } : { json: plantsJson(plants) };
  }

  private async query<R extends object>(name: string, text: string, values: unknown[]): Promise<{ rows: R[] }> {
    if (!this.ready) throw new AppError('store_unavailable', 'The store is not migrated yet; nothing was read or written. Retry later.');
    try {
      return await this.pool.query<R>({ name, text, values });
    } catch (error) {
      throw translate(error);
    }
  }

  private enqueue(operation: Pending): void {
    if (this.pending.push(operation) === 1) setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    const batch = this.pending;
    this.pending = [];
    // Stable: operations on one id stay in arrival order.
    const ordered = batch.slice().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const started = performance.now();
    let settled = false;
    // The whole wait (a free connection, connecting, the statement) is bounded, so no request outlives it.
    const deadline = setTimeout(() => {
      settled = true;
      // Counted as a timeout of its own: no driver error exists yet, and the statement may still commit.
      this.observer.failed(Object.assign(new Error('no answer within DATABASE_STATEMENT_TIMEOUT_MS'), { code: 'ETIMEDOUT' }));
      const error = new AppError(
        'store_unavailable',
        'The store did not answer in time; the change may or may not be applied. Resend the same request to find out.',
      );
      for (const operation of batch) operation.reject(error);
    }, this.deadlineMs);
    const values: unknown[] = [
      ordered.map((operation) => operation.kind),
      ordered.map((operation) => operation.id),
      ordered.map((operation) => (operation.kind === 'c' ? operation.plant.name : null)),
      ordered.map((operation) => (operation.kind === 'c' ? (operation.plant.tag ?? null) : null)),
    ];
    const outbox = this.outbox;
    const statement =
      outbox === undefined
        ? this.query<ApplyRow>('plants_apply', 'SELECT idx, created, deleted, stored_name, stored_tag FROM plants_apply($1, $2, $3, $4)', values)
        : this.query<ApplyRow>(
            'plants_apply_events',
            outbox.statement,
            values.concat(outbox.params(ordered.map((op) => (op.kind === 'c' ? { plant: op.plant, trace: op.context?.trace } : undefined)))),
          );
    statement.then(
      ({ rows }) => {
        clearTimeout(deadline);
        if (settled) return;
        const seconds = (performance.now() - started) / 1000;
        this.observer.committed(batch.length, seconds);
        this.logger.debug({ rows: batch.length, ms: Math.round(seconds * 100_000) / 100 }, 'group commit');
        if (outbox !== undefined) {
          const created = rows.reduce((count, row) => (row.created ? count + 1 : count), 0);
          if (created > 0) outbox.wake(created);
        }
        for (const row of rows) {
          const operation = ordered[row.idx - 1];
          if (operation === undefined) continue;
          if (operation.kind === 'd') operation.resolve(row.deleted);
          else if (row.stored_name === null) operation.reject(new Error(`plant ${operation.id} neither inserted nor found`));
          else operation.resolve({ created: row.created, stored: toPlant(row.stored_name, row.stored_tag) });
        }
        if (rows.length !== ordered.length) {
          const missing = new Error(`plants_apply answered ${rows.length} of ${ordered.length} operations`);
          for (const operation of ordered.slice(rows.length)) operation.reject(missing);
        }
      },
      (error: unknown) => {
        clearTimeout(deadline);
        if (settled) return;
        // The driver's own error (its SQLSTATE or errno), not the 503 it becomes; a not-migrated store has none.
        this.observer.failed(error instanceof AppError && error.cause !== undefined ? error.cause : error);
        const translated = translate(error);
        for (const operation of batch) operation.reject(translated);
      },
    );
  };
}
