// The environment, read once: each subsystem's slice (its variables and the transform to its piece of Config) is
// in its own file here, and this file puts them together. A new subsystem adds one file and two lines below.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { authSettings, authVariables } from './auth';
import { backupSettings, backupVariables } from './backups';
import { ConfigError } from './config-error';
import { eventsSettings, eventsVariables } from './events';
import { httpSettings, httpVariables } from './http';
import { idempotencySettings, idempotencyVariables } from './idempotency';
import { limitsSettings, limitsVariables } from './limits';
import { loggingSettings, loggingVariables } from './logging';
import { metricsSettings, metricsVariables } from './metrics';
import { serverSettings, serverVariables } from './server';
import { storeSettings, storeVariables } from './store';
import { tenantsSettings, tenantsVariables } from './tenants';
import { webhookSettings, webhookVariables } from './webhooks';
import { workersSettings, workersVariables } from './workers';

export { ConfigError } from './config-error';
export type { DatabaseTarget } from './fields';
export { MIN_TOKEN_LENGTH, TOKEN_SYNTAX, type TokenSource } from './auth';
export { checkEventTypes, type WebhookConfig, type WebhookSubscriber } from './webhooks';
export { poolPerWorker } from './workers';

/**
 * Every variable the service reads, in the order of the slices; a slice that reads another's variable names the
 * same field, so each appears once. Every variable is a string or absent; an empty string counts as absent, as
 * compose files often pass them. `.env.example` and docs/configuration.md are generated from this schema's
 * descriptions and defaults (tests/helpers/config-reference.ts), and a test checks they are current.
 */
export const environmentSchema = z.object({
  ...serverVariables,
  ...workersVariables,
  ...metricsVariables,
  ...storeVariables,
  ...authVariables,
  ...tenantsVariables,
  ...loggingVariables,
  ...httpVariables,
  ...limitsVariables,
  ...webhookVariables,
  ...eventsVariables,
  ...idempotencyVariables,
  ...backupVariables,
});

/** Every variable the service reads; `.env.example` lists the same set (checked by a test). */
export const CONFIG_VARIABLES = Object.keys(environmentSchema.shape);

// Each slice's transform in turn, so the rules across variables are checked in this order, after every
// variable has parsed and before anything is opened.
const configSchema = (generate: () => string) =>
  environmentSchema.transform((env) =>
    Object.freeze({
      ...serverSettings(env),
      ...metricsSettings(env),
      ...storeSettings(env),
      ...authSettings(env, generate),
      ...tenantsSettings(env),
      ...loggingSettings(env),
      ...httpSettings(env),
      ...limitsSettings(env),
      ...webhookSettings(env),
      ...eventsSettings(env),
      ...idempotencySettings(env),
      ...backupSettings(env),
      ...workersSettings(env),
    }),
  );

export type Config = z.output<ReturnType<typeof configSchema>>;
export type OidcConfig = NonNullable<Config['oidc']>;
export type BackupConfig = NonNullable<Config['backup']>;
export type EventsConfig = Config['events'];
export type { TenantsConfig } from './tenants';

/** Said once per start: by the process, or at WORKERS > 1 by the supervisor that generated it for every worker. */
export const GENERATED_TOKEN_WARNING = 'AUTH_TOKENS and AUTH_TOKENS_FILE are not set: generated this bearer token, valid until the process stops';

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Parses the environment once; throws ConfigError naming the variable at fault. */
export function loadConfig(rawEnv: Record<string, string | undefined>, generate: () => string = generateToken): Config {
  const present = Object.fromEntries(
    CONFIG_VARIABLES.map((key) => [key, rawEnv[key]] as const).filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const parsed = configSchema(generate).safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(`invalid configuration:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}
