/**
 * Scopes as data: auth knows no scope by name. The resources declare theirs and which each request needs
 * (src/resource.ts); the composition root hands the union and the rule to auth as an Access.
 */
export type Scope = string;

/** The scopes a token may grant, and the one a request needs (undefined: none, routing answers). */
export type Access = {
  scopes: readonly Scope[];
  scopeOf(method: string, path: string): Scope | undefined;
};

/** How a refusal names the known scopes: "a and b". */
export const scopeList = (scopes: readonly Scope[]): string => scopes.join(' and ');

/**
 * RFC 9068 puts granted scopes in `scope` (space-separated); Okta writes `scp` as an array, Entra ID as a
 * space-separated string. Any of those forms counts; scopes no resource declares are ignored.
 */
export function scopesOfClaims(claims: Record<string, unknown>, known: ReadonlySet<Scope>): ReadonlySet<Scope> {
  const granted = new Set<Scope>();
  for (const claim of [claims.scope, claims.scp]) {
    const values = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
    for (const value of values) if (typeof value === 'string' && known.has(value)) granted.add(value);
  }
  return granted;
}
