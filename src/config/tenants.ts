// Tenants (docs/auth.md, Tenants): whose data a request acts on, chosen by the caller's credential. Unset, the
// service keeps one shared store, as before tenants.
import { z } from 'zod';
import { ConfigError } from './config-error';
import { integer, type Parsed } from './fields';

// A JWT claim's name as an identity provider writes it: `sub`, `org_id`, a namespaced `https://example.com/org`.
const CLAIM_NAME = /^[A-Za-z0-9_.:/-]{1,255}$/;

export const tenantsVariables = {
  TENANT_CLAIM: z.string().regex(CLAIM_NAME, 'must be a JWT claim name (letters, digits, _ . : / -)').optional().describe(
    'Turns tenants on: the JWT claim that names the caller\'s tenant (`sub`: each user their own store; `org_id` or similar: a store shared by a team). A static token names its tenant in its line (`tenant=<name>`). Every read, write, stream and delivery then acts inside the caller\'s tenant only. Unset: one shared store.',
  ),
  TENANT_DEFAULT: z.string().min(1).max(255).optional().describe(
    'With `TENANT_CLAIM`: the tenant that keeps what was stored before tenants were turned on (and that a static token of the shared store stood for). Required when the store already holds data.',
  ),
  RATE_LIMIT_PER_TENANT_PER_MINUTE: integer(0, 1_000_000).prefault('0').describe(
    'With `TENANT_CLAIM`: requests per minute one tenant may make across all its callers (0: no such limit), beside `RATE_LIMIT_PER_MINUTE` per caller; shared by the replicas through `REDIS_URL` like it.',
  ),
};

export type TenantsConfig = { claim: string; defaultName?: string; perTenantPerMinute: number };

export function tenantsSettings(env: Parsed<typeof tenantsVariables>): { tenants: TenantsConfig | undefined } {
  const claim = env.TENANT_CLAIM;
  if (claim === undefined) {
    if (env.TENANT_DEFAULT !== undefined) throw new ConfigError('TENANT_DEFAULT: needs TENANT_CLAIM (tenants are off without it)');
    if (env.RATE_LIMIT_PER_TENANT_PER_MINUTE > 0) throw new ConfigError('RATE_LIMIT_PER_TENANT_PER_MINUTE: needs TENANT_CLAIM (tenants are off without it)');
    return { tenants: undefined };
  }
  const tenants: TenantsConfig = { claim, perTenantPerMinute: env.RATE_LIMIT_PER_TENANT_PER_MINUTE };
  if (env.TENANT_DEFAULT !== undefined) tenants.defaultName = env.TENANT_DEFAULT;
  return { tenants };
}
