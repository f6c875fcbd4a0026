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

/**
 * A resource's admin scope (`plants:admin`: acting in any tenant with Act-As-Tenant) is granted only where a token
 * file line or a JWT names it: never by a line that lists no scopes, never by AUTH_TOKENS.
 */
export const isAdminScope = (scope: Scope): boolean => scope.endsWith(':admin');

/** The scopes a credential that names none is granted: every scope but the admin ones. */
export const defaultScopes = (scopes: readonly Scope[]): ReadonlySet<Scope> => new Set(scopes.filter((scope) => !isAdminScope(scope)));

/** The admin scope of the resource a scope belongs to: `plants:read` → `plants:admin`. */
export const adminScopeOf = (scope: Scope): Scope => `${scope.slice(0, scope.lastIndexOf(':'))}:admin`;

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
