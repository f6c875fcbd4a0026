/**
 * Tenants (issue 35): whose plants a request acts on. Every row the store keeps carries its tenant's key, and every
 * read and write names one: `SHARED_TENANT` (the empty key) when tenants are off, and the store's existing rows,
 * which then belong to TENANT_DEFAULT's tenant once tenants are turned on. The key is branded so that a raw claim
 * or header value cannot reach a repository without passing `tenantKeyOf`. Ground floor: imports nothing.
 */
export type TenantKey = string & { readonly tenantKey: unique symbol };

/** The one tenant of a store with tenants off, and TENANT_DEFAULT's tenant when they are on. */
export const SHARED_TENANT = '' as TenantKey;

/** The longest tenant name a credential may carry, in UTF-16 code units (JavaScript's `.length`). */
export const TENANT_NAME_MAX = 255;

/**
 * The stored key of a tenant name: TENANT_DEFAULT's name is the shared key (so the rows stored before tenants keep
 * their tenant without a rewrite), any other name is itself.
 */
export function tenantKeyOf(name: string, defaultName: string | undefined): TenantKey {
  return (name === defaultName ? SHARED_TENANT : name) as TenantKey;
}

/** The name a stored key stands for: the inverse of `tenantKeyOf` (the shared key without a default has none). */
export function tenantNameOf(key: TenantKey, defaultName: string | undefined): string | undefined {
  return key === SHARED_TENANT ? defaultName : key;
}
