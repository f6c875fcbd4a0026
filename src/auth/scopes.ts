/** The two scopes of the API, and which one a request needs: decided by method alone, before routing. */
export const SCOPES = ['plants:read', 'plants:write'] as const;
export type Scope = (typeof SCOPES)[number];

export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** GET/HEAD read, POST/PATCH/DELETE write; other methods need no scope and reach routing (which answers 405). */
export function requiredScope(method: string): Scope | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return 'plants:read';
    case 'POST':
    case 'PATCH':
    case 'DELETE':
      return 'plants:write';
    default:
      return undefined;
  }
}

/**
 * RFC 9068 puts granted scopes in `scope` (space-separated); Okta writes `scp` as an array, Entra ID as a
 * space-separated string. Any of those forms counts; scopes this API does not know are ignored.
 */
export function scopesOfClaims(claims: Record<string, unknown>): ReadonlySet<Scope> {
  const granted = new Set<Scope>();
  for (const claim of [claims.scope, claims.scp]) {
    const values = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
    for (const value of values) if (typeof value === 'string' && isScope(value)) granted.add(value);
  }
  return granted;
}
