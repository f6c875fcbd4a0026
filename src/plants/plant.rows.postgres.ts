/**
 * What one PostgreSQL batch reads and decides, by (tenant, id): ids are unique per tenant, and a batch may hold
 * several tenants' writes (plant.write.postgres.ts). Nested maps, so a batch of one tenant costs one outer lookup
 * a row and no key built per row. Data only: no SQL.
 */
import type { TenantKey } from '../tenant';

export class TenantRows<T> {
  private readonly byTenant = new Map<TenantKey, Map<bigint, T>>();

  get(tenant: TenantKey, id: bigint): T | undefined {
    return this.byTenant.get(tenant)?.get(id);
  }

  has(tenant: TenantKey, id: bigint): boolean {
    return this.byTenant.get(tenant)?.has(id) ?? false;
  }

  set(tenant: TenantKey, id: bigint, value: T): void {
    let rows = this.byTenant.get(tenant);
    if (rows === undefined) {
      rows = new Map();
      this.byTenant.set(tenant, rows);
    }
    rows.set(id, value);
  }

  /** A copy, so a batch can decide on it while the rows as read stay as they were. */
  copy<U = T>(): TenantRows<T | U> {
    const copy = new TenantRows<T | U>();
    for (const [tenant, rows] of this.byTenant) copy.byTenant.set(tenant, new Map<bigint, T | U>(rows));
    return copy;
  }
}

/** Each (tenant, id) once, in the order first named. */
export function distinctKeys(keys: Iterable<{ tenant: TenantKey; id: bigint }>): { tenant: TenantKey; id: bigint }[] {
  const seen = new TenantRows<true>();
  const distinct: { tenant: TenantKey; id: bigint }[] = [];
  for (const key of keys) {
    if (seen.has(key.tenant, key.id)) continue;
    seen.set(key.tenant, key.id, true);
    distinct.push(key);
  }
  return distinct;
}
