import { AppError } from '../errors';
import type { BatchOutcome, ChangeContext, Expected, FoundPlant, PlantPatch, PlantRepository, PlantsPage, StoredPlant, WriteOutcome } from './plant.repository';
import type { NewPlant, Plant } from './plant.schemas';
import type { PlantListQuery } from './plant.list-query';
import type { TenantKey } from '../tenant';
import { failed, idOf, type PlantWrite, type PutExpected, type PutPlant } from './plant.write-rule';

const notFound = (id: bigint) => new AppError('plant_not_found', `id: no plant has id ${id}.`);
const stale = (id: bigint, version: bigint) =>
  new AppError('precondition_failed', `If-Match: plant ${id} has changed (its ETag is now "${version}"); nothing was changed. GET it again, then retry with its new ETag.`);

/**
 * The error a write answers when the store decided it failed (plant.write-rule.ts `failed`): the same alone or
 * as an operation of a batch.
 */
function failure(write: PlantWrite, outcome: WriteOutcome): AppError {
  const id = idOf(write);
  if (outcome.outcome === 'conflict') {
    return new AppError('id_conflict', `id: ${id} already belongs to a plant with another name or tag (or it was edited since); use a new id, or GET it to see what is stored.`);
  }
  if (write.kind === 'put' && outcome.outcome === 'missing') {
    return new AppError('precondition_failed', `If-Match: no plant has id ${id}; nothing was written. Send the PUT without If-Match to create it.`);
  }
  if (outcome.outcome === 'missing') return notFound(id);
  const version = 'version' in outcome ? outcome.version : 0n;
  if (write.kind === 'delete') return new AppError('precondition_failed', `If-Match: plant ${id} has changed since that ETag; nothing was deleted. GET it again, then retry with its new ETag.`);
  if (write.kind === 'put' && write.expected === 'absent') {
    return new AppError('precondition_failed', `If-None-Match: plant ${id} exists (its ETag is "${version}"); nothing was changed. Use another id, or send If-Match to replace it.`);
  }
  return stale(id, version);
}

/** Throws the write's error when it failed. */
function check<T extends WriteOutcome>(write: PlantWrite, outcome: T): Exclude<T, { outcome: 'conflict' | 'stale' | 'missing' }> {
  if (failed(outcome.outcome)) throw failure(write, outcome);
  return outcome as Exclude<T, { outcome: 'conflict' | 'stale' | 'missing' }>;
}

/** A plant and its version: the ETag of the response that carries it. */
export type Versioned<T> = { plant: T; version: bigint };

export class PlantService {
  constructor(private readonly plants: PlantRepository) {}

  /**
   * The id is the key: the plant as stored again is a safe retry, anything else under that id a conflict. A
   * create replayed after an edit differs from what is stored, so it is a conflict too and changes nothing.
   */
  async create(tenant: TenantKey, plant: NewPlant, context?: ChangeContext): Promise<Versioned<Plant>> {
    const { stored, version } = check({ kind: 'create', plant }, await this.plants.create(tenant, plant, context));
    return { plant: stored, version };
  }

  /** The plant's JSON text and version. */
  async get(tenant: TenantKey, id: bigint): Promise<FoundPlant> {
    const plant = await this.plants.findById(tenant, id);
    if (plant === undefined) throw notFound(id);
    return plant;
  }

  /** One page of plants as JSON text, where the next starts when more follow, the feed position and the count. */
  list(tenant: TenantKey, query: PlantListQuery): Promise<PlantsPage> {
    return this.plants.list(tenant, query);
  }

  /**
   * A patch that leaves the plant as it is writes nothing (the store answers `unchanged`: a version that changes
   * nothing is noise in every feed); its answer is the plant as stored, with the version it has, after the same
   * 404 and If-Match checks as a write. The store decides all of it in the commit, so racing writes meet exactly
   * one winner.
   */
  async update(tenant: TenantKey, id: bigint, patch: PlantPatch, expected?: Expected, context?: ChangeContext): Promise<Versioned<StoredPlant>> {
    const { stored, version } = check({ kind: 'update', id, patch, expected }, await this.plants.update(tenant, id, patch, expected, context));
    return { plant: stored, version };
  }

  /**
   * Create or replace under the path's id: `created` tells the controller which (201 or 200). A replacement equal
   * to what is stored writes nothing and answers the plant with the version it has, as an unchanged edit does.
   */
  async put(tenant: TenantKey, id: bigint, plant: PutPlant, expected?: PutExpected, context?: ChangeContext): Promise<Versioned<StoredPlant> & { created: boolean }> {
    const outcome = check({ kind: 'put', id, plant, expected }, await this.plants.put(tenant, id, plant, expected, context));
    return { plant: outcome.stored, version: outcome.version, created: outcome.outcome === 'created' };
  }

  async delete(tenant: TenantKey, id: bigint, expected?: Expected, context?: ChangeContext): Promise<void> {
    check({ kind: 'delete', id, expected }, await this.plants.delete(tenant, id, expected, context));
  }

  /**
   * All or nothing: every write's outcome, or the first failure's error as that write alone would answer it,
   * naming its operation (index) in the message and the body.
   */
  async batch(tenant: TenantKey, writes: readonly PlantWrite[], context?: ChangeContext): Promise<Extract<BatchOutcome, { outcome: 'applied' }>['results']> {
    const answer = await this.plants.batch(tenant, writes, context);
    if (answer.outcome === 'applied') return answer.results;
    const { reason, message } = failure(writes[answer.index] as PlantWrite, answer.result);
    throw new AppError(reason, `operations[${answer.index}]: ${message}`, { operation: answer.index });
  }
}
