import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  byteSize,
  databaseUrl,
  duration,
  integer,
  jwksUrl,
  list,
  origins,
  redisUrl,
  retrySchedule,
  trustProxy,
  webhookSecret,
  type DatabaseTarget,
} from './fields';

export type { DatabaseTarget } from './fields';

export const MIN_TOKEN_LENGTH = 32;

// RFC 6750 2.1 b64token: a client can only present such a token in an Authorization header.
export const TOKEN_SYNTAX = /^[A-Za-z0-9\-._~+/]+=*$/;

// Every variable is a string or absent; an empty string counts as absent, as compose files often pass them.
const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).prefault('development'),
  PORT: integer(0, 65535).prefault('3000'),
  HOST: z.string().prefault('127.0.0.1'),
  DATABASE_URL: databaseUrl.prefault('file:./data/plants.db'),
  DATABASE_BUSY_TIMEOUT_MS: integer(0, 60_000).prefault('2000'),
  DATABASE_POOL_SIZE: integer(1, 1000).prefault('10'),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 600_000).prefault('5000'),
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000).prefault('2000'),
  AUTH_TOKENS: list.optional(),
  AUTH_TOKENS_FILE: z.string().optional(),
  AUTH_JWKS_URL: jwksUrl.optional(),
  AUTH_ISSUER: z.string().optional(),
  AUTH_AUDIENCE: z.string().optional(),
  AUTH_CLOCK_TOLERANCE_S: integer(0, 300).prefault('30'),
  AUTH_JWKS_COOLDOWN_S: integer(0, 3600).prefault('30'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).prefault('info'),
  LOG_BUFFER_LIMIT: byteSize.prefault('4mb'),
  BODY_LIMIT: byteSize.prefault('16kb'),
  CORS_ORIGINS: origins.prefault(''),
  TRUST_PROXY: trustProxy.prefault('false'),
  RATE_LIMIT_PER_MINUTE: integer(0, 1_000_000).prefault('1200'),
  REDIS_URL: redisUrl.optional(),
  REDIS_KEY_PREFIX: z.string().prefault('plant-store:rate-limit:'),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).prefault('10000'),
  LOAD_SHED_LAG_MS: integer(0, 60_000).prefault('100'),
  HEADERS_TIMEOUT_MS: integer(1000, 600_000).prefault('10000'),
  REQUEST_TIMEOUT_MS: integer(1000, 600_000).prefault('30000'),
  KEEP_ALIVE_TIMEOUT_MS: integer(1000, 600_000).prefault('65000'),
  METRICS_PORT: integer(0, 65535).prefault('9464'),
  METRICS_HOST: z.string().prefault('127.0.0.1'),
  DOCS_ENABLED: z.enum(['true', 'false']).transform((value) => value === 'true').prefault('true'),
  WEBHOOK_URLS: list.optional(),
  WEBHOOK_URLS_FILE: z.string().optional(),
  WEBHOOK_SECRET: webhookSecret.optional(),
  WEBHOOK_TIMEOUT_MS: integer(100, 60_000).prefault('5000'),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule.prefault('5s,5m,30m,2h,5h,10h,10h'),
  WEBHOOK_RETENTION_HOURS: integer(1, 24 * 365).prefault('72'),
  WEBHOOK_CONNECTIONS: integer(1, 256).prefault('64'),
  MAX_CONNECTIONS: integer(1, 1_000_000).prefault('1000'),
  BACKUP_DIR: z.string().optional(),
  BACKUP_INTERVAL: duration(1000, 7 * 24 * 3_600_000).prefault('1h'),
  BACKUP_KEEP: integer(1, 10_000).prefault('24'),
});

/** Every variable the service reads; `.env.example` lists the same set (checked by a test). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);

export type TokenSource = 'AUTH_TOKENS' | 'AUTH_TOKENS_FILE' | 'AUTH_JWKS_URL' | 'generated';

export type OidcConfig = Readonly<{ jwksUrl: string; issuer: string; audience: string; clockToleranceS: number; jwksCooldownS: number }>;

export type Config = Readonly<{
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  host: string;
  database: DatabaseTarget;
  databaseBusyTimeoutMs: number;
  databasePoolSize: number;
  databaseStatementTimeoutMs: number;
  databaseConnectTimeoutMs: number;
  authTokens: readonly string[];
  authTokensFile: string | undefined;
  tokenSource: TokenSource;
  oidc: OidcConfig | undefined;
  logLevel: string;
  logBufferBytes: number;
  bodyLimitBytes: number;
  corsOrigins: readonly string[];
  trustProxy: false | number | readonly string[];
  rateLimitPerMinute: number;
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  shutdownTimeoutMs: number;
  loadShedLagMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  metricsPort: number;
  metricsHost: string;
  docsEnabled: boolean;
  webhooks: WebhookConfig | undefined;
  maxConnections: number;
  backup: BackupConfig | undefined;
}>;

/** The service's own backups of its SQLite store; undefined when BACKUP_DIR is not set. */
export type BackupConfig = Readonly<{ dir: string; intervalMs: number; keep: number }>;

/** Subscribers and how to reach them; undefined when no webhook is configured. */
export type WebhookConfig = Readonly<{
  urls: readonly string[];
  secret: string;
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  retentionHours: number;
  connections: number;
}>;

export class ConfigError extends Error {}

// The file itself is read by src/auth (StaticTokenStore), at start and again on each rotation.
function resolveTokens(
  env: z.infer<typeof envSchema>,
  generate: () => string,
): { authTokens: string[]; authTokensFile: string | undefined; tokenSource: TokenSource } {
  const fromEnv = env.AUTH_TOKENS ?? [];
  const tooShort = fromEnv.findIndex((token) => token.length < MIN_TOKEN_LENGTH);
  if (tooShort !== -1) {
    throw new ConfigError(`AUTH_TOKENS: token ${tooShort + 1} is shorter than ${MIN_TOKEN_LENGTH} characters`);
  }
  if (fromEnv.some((token) => /\s/.test(token))) {
    throw new ConfigError('AUTH_TOKENS: a token must not contain white space');
  }
  const malformed = fromEnv.findIndex((token) => !TOKEN_SYNTAX.test(token));
  if (malformed !== -1) {
    throw new ConfigError(
      `AUTH_TOKENS: token ${malformed + 1} has characters outside RFC 6750's token syntax (A-Z a-z 0-9 - . _ ~ + / and = at the end)`,
    );
  }
  const authTokensFile = env.AUTH_TOKENS_FILE;
  if (authTokensFile !== undefined) return { authTokens: fromEnv, authTokensFile, tokenSource: 'AUTH_TOKENS_FILE' };
  if (fromEnv.length > 0) return { authTokens: fromEnv, authTokensFile, tokenSource: 'AUTH_TOKENS' };
  if (env.AUTH_JWKS_URL !== undefined) return { authTokens: [], authTokensFile, tokenSource: 'AUTH_JWKS_URL' };
  if (env.NODE_ENV === 'production') {
    throw new ConfigError('AUTH_TOKENS or AUTH_TOKENS_FILE must be set when NODE_ENV=production (or AUTH_JWKS_URL to accept JWT access tokens only)');
  }
  return { authTokens: [generate()], authTokensFile, tokenSource: 'generated' };
}

function resolveOidc(env: z.infer<typeof envSchema>): OidcConfig | undefined {
  const { AUTH_JWKS_URL: jwksUrl, AUTH_ISSUER: issuer, AUTH_AUDIENCE: audience } = env;
  if (jwksUrl === undefined && issuer === undefined && audience === undefined) return undefined;
  if (jwksUrl === undefined || issuer === undefined || audience === undefined) {
    throw new ConfigError('AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE go together: set all three to accept JWT access tokens, or none');
  }
  return Object.freeze({ jwksUrl, issuer, audience, clockToleranceS: env.AUTH_CLOCK_TOLERANCE_S, jwksCooldownS: env.AUTH_JWKS_COOLDOWN_S });
}

function readUrlsFile(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
  } catch (error) {
    throw new ConfigError(`WEBHOOK_URLS_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function resolveWebhooks(env: z.infer<typeof envSchema>): WebhookConfig | undefined {
  const urls = [...(env.WEBHOOK_URLS ?? []), ...(env.WEBHOOK_URLS_FILE === undefined ? [] : readUrlsFile(env.WEBHOOK_URLS_FILE))];
  if (urls.length === 0 && env.WEBHOOK_SECRET === undefined) return undefined;
  if (urls.length === 0) throw new ConfigError('WEBHOOK_SECRET is set but no subscriber is: set WEBHOOK_URLS or WEBHOOK_URLS_FILE, or unset WEBHOOK_SECRET');
  if (env.WEBHOOK_SECRET === undefined) throw new ConfigError('WEBHOOK_URLS / WEBHOOK_URLS_FILE need WEBHOOK_SECRET (whsec_ followed by base64) to sign deliveries');
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`WEBHOOK_URLS: "${url}" is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`WEBHOOK_URLS: "${url}" must be http or https`);
    // Logs name the subscriber by host; credentials in the URL would be one careless log line from leaking.
    if (parsed.username !== '' || parsed.password !== '') throw new ConfigError(`WEBHOOK_URLS: a URL must not carry a user or password (${parsed.host})`);
  }
  if (new Set(urls).size !== urls.length) throw new ConfigError('WEBHOOK_URLS: a URL is listed twice; each subscriber once');
  return Object.freeze({
    urls,
    secret: env.WEBHOOK_SECRET,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE,
    retentionHours: env.WEBHOOK_RETENTION_HOURS,
    connections: env.WEBHOOK_CONNECTIONS,
  });
}

function resolveBackup(env: z.infer<typeof envSchema>): BackupConfig | undefined {
  if (env.BACKUP_DIR === undefined) return undefined;
  // PostgreSQL is backed up by its own tools (pg_dump, base backups); a file copy of it is not a backup.
  if (env.DATABASE_URL.dialect === 'postgres') {
    throw new ConfigError('BACKUP_DIR: the service backs up its SQLite store only; with PostgreSQL unset it and use pg_dump (docs/backups.md)');
  }
  return Object.freeze({ dir: path.resolve(env.BACKUP_DIR), intervalMs: env.BACKUP_INTERVAL, keep: env.BACKUP_KEEP });
}

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Parses the environment once; throws ConfigError naming the variable at fault. */
export function loadConfig(
  rawEnv: Record<string, string | undefined>,
  generate: () => string = generateToken,
): Config {
  const present = Object.fromEntries(
    Object.keys(envSchema.shape)
      .map((key) => [key, rawEnv[key]] as const)
      .filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(`invalid configuration:\n${z.prettifyError(parsed.error)}`);
  }
  const env = parsed.data;
  // Cross-field rules, each naming the variable to change; checked before anything is opened.
  if (env.REQUEST_TIMEOUT_MS < env.HEADERS_TIMEOUT_MS) {
    throw new ConfigError(
      `REQUEST_TIMEOUT_MS: ${env.REQUEST_TIMEOUT_MS} is below HEADERS_TIMEOUT_MS (${env.HEADERS_TIMEOUT_MS}); the whole request cannot take less time than its headers`,
    );
  }
  if (env.METRICS_PORT !== 0 && env.METRICS_PORT === env.PORT) {
    throw new ConfigError('invalid configuration:\n✖ METRICS_PORT must differ from PORT: metrics stay off the public listener (0 turns them off)');
  }
  // A request waits for a connection, then for its statement, and must be answered within the statement timeout.
  if (env.DATABASE_CONNECT_TIMEOUT_MS >= env.DATABASE_STATEMENT_TIMEOUT_MS) {
    throw new ConfigError('DATABASE_CONNECT_TIMEOUT_MS must be less than DATABASE_STATEMENT_TIMEOUT_MS');
  }
  return Object.freeze({
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    database: env.DATABASE_URL,
    databaseBusyTimeoutMs: env.DATABASE_BUSY_TIMEOUT_MS,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseConnectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
    ...resolveTokens(env, generate),
    oidc: resolveOidc(env),
    logLevel: env.LOG_LEVEL,
    logBufferBytes: env.LOG_BUFFER_LIMIT,
    bodyLimitBytes: env.BODY_LIMIT,
    corsOrigins: env.CORS_ORIGINS,
    trustProxy: env.TRUST_PROXY,
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    loadShedLagMs: env.LOAD_SHED_LAG_MS,
    headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
    metricsPort: env.METRICS_PORT,
    metricsHost: env.METRICS_HOST,
    docsEnabled: env.DOCS_ENABLED,
    webhooks: resolveWebhooks(env),
    maxConnections: env.MAX_CONNECTIONS,
    backup: resolveBackup(env),
  });
}
