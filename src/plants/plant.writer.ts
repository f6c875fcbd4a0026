/**
 * The repository port's four writes, each as one PlantWrite (plant.write-rule.ts): a store implements only
 * `submit`, how a write reaches its group commit, and answers the rule's outcome. Both stores extend it, so the
 * port's write methods are written once.
 */
import type { BatchOutcome, ChangeContext, CreateOutcome, DeleteOutcome, Expected, PlantPatch, PutOutcome, UpdateOutcome, WriteOutcome } from './plant.repository';
import type { NewPlant } from './plant.schemas';
import type { PlantWrite, PutExpected, PutPlant } from './plant.write-rule';
import type { TenantKey } from '../tenant';

export abstract class PlantWriter {
  /** Resolves with the write's outcome once the commit that holds it is durable. */
  protected abstract submit(tenant: TenantKey, write: PlantWrite, context: ChangeContext | undefined): Promise<WriteOutcome>;

  /** Resolves once the commit that holds the whole batch is durable, or with its first failure and nothing written. */
  abstract batch(tenant: TenantKey, writes: readonly PlantWrite[], context?: ChangeContext): Promise<BatchOutcome>;

  create(tenant: TenantKey, plant: NewPlant, context?: ChangeContext): Promise<CreateOutcome> {
    return this.submit(tenant, { kind: 'create', plant }, context) as Promise<CreateOutcome>;
  }

  update(tenant: TenantKey, id: bigint, patch: PlantPatch, expected?: Expected, context?: ChangeContext): Promise<UpdateOutcome> {
    return this.submit(tenant, { kind: 'update', id, patch, expected }, context) as Promise<UpdateOutcome>;
  }

  delete(tenant: TenantKey, id: bigint, expected?: Expected, context?: ChangeContext): Promise<DeleteOutcome> {
    return this.submit(tenant, { kind: 'delete', id, expected }, context) as Promise<DeleteOutcome>;
  }

  put(tenant: TenantKey, id: bigint, plant: PutPlant, expected?: PutExpected, context?: ChangeContext): Promise<PutOutcome> {
    return this.submit(tenant, { kind: 'put', id, plant, expected }, context) as Promise<PutOutcome>;
  }
}
