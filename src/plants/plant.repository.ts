import type { TraceContext } from '../tracing';
import type { StoredPlant } from './plant.members';
import type { NewPlant, PlantPatchBody } from './plant.schemas';
import type { PlantListQuery, SortKeys } from './plant.list-query';
import type { PlantWrite, PutExpected, PutPlant } from './plant.write-rule';
import type { VersionText } from './plant.etags';
import type { TenantKey } from '../tenant';

/**
 * A JSON Merge Patch already parsed (PlantPatch's members but the id): a member given replaces it, and null removes
 * an optional one.
 */
export type PlantPatch = Omit<PlantPatchBody, 'id'>;

/**
 * An edit's or delete's precondition (If-Match): the versions it may apply to. Empty: none can match, so the
 * change is `stale` whenever the plant exists.
 */
export type Expected = readonly bigint[];

/** A plant as stored and its version: the position of its last change in the feed, its ETag. */
type Answered<Outcome extends string> = { outcome: Outcome; stored: StoredPlant; version: bigint };

/**
 * What a write answers: the outcome plant.write-rule.ts decided, committed. `created` and `updated` with the plant
 * as now stored and its new version; `replayed` (a create equal to what is stored), `conflict` (a create under an
 * id that holds another plant) and `unchanged` (an edit that leaves the plant as it is) with the plant as stored
 * and its version, having written nothing; `stale` with the current version; `missing` and `deleted` alone.
 */
export type CreateOutcome = Answered<'created' | 'replayed' | 'conflict'>;
export type UpdateOutcome = Answered<'updated' | 'unchanged'> | { outcome: 'missing' } | { outcome: 'stale'; version: bigint };
export type DeleteOutcome = { outcome: 'deleted' | 'missing' } | { outcome: 'stale'; version: bigint };
/** A put: `created` or (as an edit) `updated`/`unchanged`; `missing` when its precondition needs a plant and there is none. */
export type PutOutcome = Answered<'created' | 'updated' | 'unchanged'> | { outcome: 'missing' } | { outcome: 'stale'; version: bigint };
export type WriteOutcome = CreateOutcome | UpdateOutcome | DeleteOutcome | PutOutcome;

/**
 * What a batch answers: every write's outcome, all committed in one transaction, in order; or the first write
 * that failed (plant.write-rule.ts `failed`), its index and outcome, with none of the batch written.
 */
export type BatchOutcome = { outcome: 'applied'; results: WriteOutcome[] } | { outcome: 'failed'; index: number; result: WriteOutcome };

/** One plant as a read answers it: its JSON text (a StoredPlant) and its version. */
export type FoundPlant = { json: string; version: bigint };

export type { StoredPlant } from './plant.members';

/**
 * Reads come back as the JSON text a response carries, ids written digit for digit: SQLite writes it in C
 * (json_object), with no row object or bigint per plant (docs/decisions.md, reads).
 */
export type PlantsPage = {
  /** A JSON array of StoredPlant, `tag` left out where there is none. */
  json: string;
  /** The feed position of the last change the page reflects, read in the same snapshot as its rows; 0 before any. */
  position: bigint;
  /** With `count`: every plant matching tag and search, whatever the page. */
  total?: number;
  /** sort id or -id, when more plants follow: the page's last id, where the next page starts. */
  nextAfter?: bigint;
  /** The other sorts, when more plants follow: the page's last keys (plant.list-query.ts SortKeys). */
  nextKeys?: SortKeys;
};

/** A write's answer as Idempotency-Key stores it: status, ETag, Location and body text (absent for a 204). */
export type StoredAnswer = { fingerprint: string; status: number; etag?: string; location?: string; body?: string };

/** The answer alone, as a write's outcome renders it (plant.answers.ts). */
export type RenderedAnswer = Omit<StoredAnswer, 'fingerprint'>;

/**
 * A write sent with Idempotency-Key: its caller, key and request fingerprint, until when the answer is kept, and
 * how its answer is written from its outcome (undefined for an outcome that fails: nothing is stored), its
 * versions by `text` when given (plant.etags.ts). The store writes the answer in the write's own transaction and
 * sets `kept`.
 */
export type KeepAnswer = {
  caller: string;
  key: string;
  fingerprint: string;
  expiresAt: number;
  render: (outcome: WriteOutcome | BatchOutcome, text?: VersionText) => RenderedAnswer | undefined;
  kept?: boolean;
};

/**
 * Where a change came from, for what it sets off: the caller's W3C trace, continued by its webhook deliveries;
 * `keep`, its Idempotency-Key answer, stored with the change.
 */
export type ChangeContext = { trace?: TraceContext; keep?: KeepAnswer };

/**
 * What PlantService needs from a store, whatever the database: SQL lives in one implementation per dialect
 * (plant.repository.sqlite.ts, …). Every method resolves only after its change is committed and durable. Every
 * method acts inside one tenant, its first argument: a plant of another tenant is exactly a missing one, and ids
 * are unique per tenant (src/tenant.ts; the shared tenant with tenants off).
 */
export type PlantRepository = {
  /**
   * Stores the plant unless its id holds one; answers `created`, `replayed` or `conflict` with what is stored
   * under the id, once committed. Creates for the same id that arrive together see each other in arrival order.
   * A store that writes webhook events stores `context.trace` with the plant's events, when given.
   */
  create(tenant: TenantKey, plant: NewPlant, context?: ChangeContext): Promise<CreateOutcome>;
  /** The plant's JSON text (a StoredPlant) and version, or undefined when no plant has the id. */
  findById(tenant: TenantKey, id: bigint): Promise<FoundPlant | undefined>;
  /**
   * At most `limit` plants matching `tag` and `search` (a substring of name_key), in `sort`'s order, after `after`
   * (id sorts) or `from` (the others); the feed position and, with `count`, the total, all read in one snapshot.
   */
  list(tenant: TenantKey, query: PlantListQuery): Promise<PlantsPage>;
  /**
   * Applies the patch when the plant exists (and its version is one of `expected`, when given), as one step with
   * the check; resolves after the commit. An edit that changes something is a new version and a plant.updated
   * event; one that leaves the plant as it is answers `unchanged` and writes nothing (no version, no event).
   */
  update(tenant: TenantKey, id: bigint, patch: PlantPatch, expected?: Expected, context?: ChangeContext): Promise<UpdateOutcome>;
  /**
   * Resolves after the delete is committed and fsynced. Creates, edits and deletes that arrive together apply in
   * arrival order, each change with its event in the same transaction. `context.trace`, as for a create, goes
   * with the edit's or delete's webhook events.
   */
  delete(tenant: TenantKey, id: bigint, expected?: Expected, context?: ChangeContext): Promise<DeleteOutcome>;
  /**
   * Creates the plant under `id` or replaces its writable members (one the plant leaves out is removed), as one
   * step with the precondition; a replacement equal to what is stored answers `unchanged` and writes nothing.
   */
  put(tenant: TenantKey, id: bigint, plant: PutPlant, expected?: PutExpected, context?: ChangeContext): Promise<PutOutcome>;
  /**
   * The writes in order, each decided against what the ones before it left, all or nothing: one transaction (one
   * group commit with the writes that arrive with it), consecutive positions for its events.
   */
  batch(tenant: TenantKey, writes: readonly PlantWrite[], context?: ChangeContext): Promise<BatchOutcome>;
};
