/**
 * The settings the plant-store command shares with the service: the store (DATABASE_URL, or --database) and its
 * timeouts, parsed by the service's own field rules. Only these: the command runs beside a service whose other
 * variables (tokens, ports) it has no use for.
 */
import { z } from 'zod';
import { databaseUrl, integer, type DatabaseTarget } from '../config/fields';
import { TENANT_NAME_MAX } from '../tenant';
import { redactUrl, type PostgresOptions } from '../db/database.postgres';

const cliEnvSchema = z.object({
  DATABASE_URL: databaseUrl.prefault('file:./data/plants.db'),
  DATABASE_BUSY_TIMEOUT_MS: integer(0, 60_000).prefault('2000'),
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000).prefault('2000'),
  // The service's TENANT_DEFAULT: an import puts the lines naming it into the shared tenant, as the service keeps
  // that tenant's plants (src/tenant.ts). Only its length is checked here; TENANT_CLAIM is the service's business.
  TENANT_DEFAULT: z.string().max(TENANT_NAME_MAX).optional(),
});

/** `defaultTenant`: TENANT_DEFAULT, the tenant name whose import lines go to the shared tenant. */
export type CliConfig = { database: DatabaseTarget; busyTimeoutMs: number; connectTimeoutMs: number; defaultTenant?: string };

export class UsageError extends Error {}

export function loadCliConfig(env: Record<string, string | undefined>, databaseFlag: string | undefined): CliConfig {
  const present = Object.fromEntries(
    Object.keys(cliEnvSchema.shape)
      .map((key) => [key, key === 'DATABASE_URL' && databaseFlag !== undefined ? databaseFlag : env[key]] as const)
      .filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const parsed = cliEnvSchema.safeParse(present);
  if (!parsed.success) throw new UsageError(`invalid configuration:\n${z.prettifyError(parsed.error)}`);
  const { DATABASE_URL: database, DATABASE_BUSY_TIMEOUT_MS: busyTimeoutMs, DATABASE_CONNECT_TIMEOUT_MS: connectTimeoutMs, TENANT_DEFAULT: defaultTenant } = parsed.data;
  return { database, busyTimeoutMs, connectTimeoutMs, ...(defaultTenant === undefined ? {} : { defaultTenant }) };
}

export function parseTarget(value: string, flag: string): DatabaseTarget {
  const parsed = databaseUrl.safeParse(value);
  if (!parsed.success) throw new UsageError(`${flag}: ${parsed.error.issues[0]?.message ?? 'is not a store URL'}`);
  return parsed.data;
}

/** A command's PostgreSQL session: no statement timeout (an import may run for a minute), the service's connect timeout. */
export const postgresOptions = (url: string, config: CliConfig): PostgresOptions => ({
  url,
  poolSize: 1,
  statementTimeoutMs: 0,
  connectTimeoutMs: config.connectTimeoutMs,
});

export const describeTarget = (target: DatabaseTarget): string => (target.dialect === 'sqlite' ? target.path : redactUrl(target.url));
