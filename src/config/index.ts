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
  webhookSecrets,
  type DatabaseTarget,
} from './fields';

export type { DatabaseTarget } from './fields';

export const MIN_TOKEN_LENGTH = 32;

// RFC 6750 2.1 b64token: a client can only present such a token in an Authorization header.
export const TOKEN_SYNTAX = /^[A-Za-z0-9\-._~+/]+=*$/;

// Every variable is a string or absent; an empty string counts as absent, as compose files often pass them.
const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).prefault('development').describe(
    '`development`, `production` or `test`. `production` requires a token source (`AUTH_TOKENS`, `AUTH_TOKENS_FILE` or `AUTH_JWKS_URL`); nothing else branches on it.',
  ),
  PORT: integer(0, 65535).prefault('3000').describe(
    'TCP port of the public listener.',
  ),
  HOST: z.string().prefault('127.0.0.1').describe(
    'Address of the public listener. The Dockerfile sets `0.0.0.0`.',
  ),
  DATABASE_URL: databaseUrl.prefault('file:./data/plants.db').describe(
    '`file:<path>` names the SQLite file (its directory is created when missing; a relative path is from the working directory). `postgres://user:password@host:5432/database` (or `postgresql://`) uses PostgreSQL instead, for several replicas.',
  ),
  DATABASE_BUSY_TIMEOUT_MS: integer(0, 60_000).prefault('2000').describe(
    'SQLite: how long a write keeps retrying (on timers, never blocking) while another process holds the lock, before 503 (milliseconds).',
  ),
  DATABASE_POOL_SIZE: integer(1, 1000).prefault('10').describe(
    'PostgreSQL: connections this process keeps at most.',
  ),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 600_000).prefault('5000').describe(
    'PostgreSQL: the longest a request waits on the database, a connection and then its statement, before 503 (milliseconds).',
  ),
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000).prefault('2000').describe(
    'PostgreSQL: the longest one connection attempt may take (milliseconds); less than `DATABASE_STATEMENT_TIMEOUT_MS`.',
  ),
  AUTH_TOKENS: list.optional().describe(
    'Accepted bearer tokens, comma-separated, each at least 32 characters of RFC 6750 token syntax (`A-Z a-z 0-9 - . _ ~ + /`, `=` at the end). With neither this nor `AUTH_TOKENS_FILE` outside production, one token is generated and logged at start.',
  ),
  AUTH_TOKENS_FILE: z.string().optional().describe(
    'A file of static tokens, one a line (blank lines and `#` lines skipped), e.g. a container secret: the token itself or `sha256:<64 hex digits>` of it (`npm run token` prints both), then optional scopes (`plants:read plants:write`; none means both). Accepted together with `AUTH_TOKENS`; re-read on SIGHUP and when the file changes (a file that does not parse keeps the previous set and logs an error).',
  ),
  AUTH_JWKS_URL: jwksUrl.optional().describe(
    'The identity provider\'s JWKS URL (Keycloak, Auth0, …): turns on JWT access tokens. `https://`, or `http://` on loopback only. Set with `AUTH_ISSUER` and `AUTH_AUDIENCE`, or not at all.',
  ),
  AUTH_ISSUER: z.string().optional().describe(
    'The issuer (`iss`) a JWT access token must carry; required with `AUTH_JWKS_URL`.',
  ),
  AUTH_AUDIENCE: z.string().optional().describe(
    'The audience (`aud`) a JWT access token must carry; required with `AUTH_JWKS_URL`.',
  ),
  AUTH_CLOCK_TOLERANCE_S: integer(0, 300).prefault('30').describe(
    'Seconds of clock skew allowed when checking a JWT\'s `exp`, `nbf` and `iat` (0 to 300).',
  ),
  // At least a second: with none, every token naming an unknown kid would be a fetch from the provider.
  AUTH_JWKS_COOLDOWN_S: integer(1, 3600).prefault('30').describe(
    'Seconds between two fetches of the JWKS at least (a token with an unknown `kid` triggers a fetch); 1 to 3600.',
  ),
  AUTH_JWKS_TIMEOUT_MS: integer(100, 60_000).prefault('5000').describe(
    'One JWKS fetch, connection, headers and body (1 MiB at most), within this (milliseconds); also the longest a request waits for keys. Past it the fetch has failed: the last good keys stay, or with none yet JWTs get 503 (50310).',
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).prefault('info').describe(
    'pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
  ),
  LOG_BUFFER_LIMIT: byteSize.prefault('4mb').describe(
    'Log lines held for a slow or blocked stdout, at most this much (bytes, or a number with `kb` or `mb`). Past it lines are dropped and counted; the count is logged once stdout drains.',
  ),
  BODY_LIMIT: byteSize.prefault('16kb').describe(
    'Largest accepted request body: bytes, or a number with `kb` or `mb` (1024-based).',
  ),
  CORS_ORIGINS: origins.prefault('').describe(
    'Browser origins allowed to call, comma-separated (`https://app.example.com`). Empty: no CORS headers at all.',
  ),
  TRUST_PROXY: trustProxy.prefault('false').describe(
    'Which proxies to trust for `X-Forwarded-For`: `false`, a hop count (`1` behind one nginx), or comma-separated addresses, CIDRs or IPv4 address/netmask (also `loopback`, `linklocal`, `uniquelocal`). `true` is refused, since it trusts what any client writes; so is a list covering every address (`0.0.0.0/0`, `::/0`, or ranges that add up to it).',
  ),
  RATE_LIMIT_PER_MINUTE: integer(0, 1_000_000).prefault('1200').describe(
    'Requests per minute per token, and per client address for requests without a valid token. `0` disables.',
  ),
  REDIS_URL: redisUrl.optional().describe(
    '`redis://host:6379` keeps the rate limit\'s counters in Redis, shared by every replica; when Redis cannot be reached requests go through unlimited (one log line per outage). Empty: counters in this process.',
  ),
  REDIS_KEY_PREFIX: z.string().prefault('plant-store:rate-limit:').describe(
    'Prefix of the rate limit\'s keys in Redis: one per deployment sharing a Redis.',
  ),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).prefault('10000').describe(
    'On SIGTERM or SIGINT: how long in-flight requests and webhook attempts may take before their connections are closed and the process exits 1 (milliseconds).',
  ),
  LOAD_SHED_LAG_MS: integer(0, 60_000).prefault('100').describe(
    'Load shedding on queueing: when 64 or more requests are in progress and the 64 oldest have each waited longer than this (milliseconds), a new request gets 503 with `Retry-After` instead of joining the line (a request with a body waits from when its body is complete: a client sending it slowly is not a queue); health checks are never shed, and neither is a client with 64 connections or fewer in a closed loop. `0` disables.',
  ),
  HEADERS_TIMEOUT_MS: integer(1000, 600_000).prefault('10000').describe(
    'Against slow clients: time to receive all request headers, then 408 (milliseconds).',
  ),
  REQUEST_TIMEOUT_MS: integer(1000, 600_000).prefault('30000').describe(
    'Against slow clients: time to receive the whole request, then 408 (milliseconds); not below `HEADERS_TIMEOUT_MS`.',
  ),
  KEEP_ALIVE_TIMEOUT_MS: integer(1000, 600_000).prefault('65000').describe(
    'Idle keep-alive connections close after this (milliseconds); keep it above the proxy\'s upstream idle timeout (nginx 60 s), so the proxy closes first.',
  ),
  METRICS_PORT: integer(0, 65535).prefault('9464').describe(
    'Prometheus metrics (`GET /metrics`) on a listener of their own, never on `PORT` (8 connections at most, closed after 5 s silent). `0` turns metrics off entirely: no instrument runs. A port in use stops the start with a line naming this variable.',
  ),
  METRICS_HOST: z.string().prefault('127.0.0.1').describe(
    'Address of the metrics listener. The Dockerfile sets `0.0.0.0` and publishes no port for it; nginx does not route to it.',
  ),
  DOCS_ENABLED: z.enum(['true', 'false']).transform((value) => value === 'true').prefault('true').describe(
    'The API reference page at `GET /docs` (no token needed to read it); `false` turns it off.',
  ),
  WEBHOOK_URLS: list.optional().describe(
    'New-plant webhook subscribers: `http` or `https` URLs, comma-separated, without user or password. Set with `WEBHOOK_SECRET`, or not at all: unset, no webhook runs and nothing is stored.',
  ),
  WEBHOOK_URLS_FILE: z.string().optional().describe(
    'A file of more subscribers, one URL a line (`#` lines skipped), added to `WEBHOOK_URLS`.',
  ),
  WEBHOOK_SECRET: webhookSecrets.optional().describe(
    'Standard Webhooks signing secret: `whsec_` and the base64 of at least 24 random bytes (`whsec_$(openssl rand -base64 32)`). Required with subscribers, refused without. During a rotation, old and new separated by a comma or a space: each signs every delivery, and `webhook-signature` carries every signature, space-separated.',
  ),
  WEBHOOK_TIMEOUT_MS: integer(100, 60_000).prefault('5000').describe(
    'A delivery attempt without a 2xx status within this time has failed (milliseconds); a 2xx whose body is still coming then is delivered.',
  ),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule.prefault('5s,5m,30m,2h,5h,10h,10h').describe(
    'Delays before each retry (`ms`, `s`, `m`, `h`), each with ±20% jitter; after the last one the event is marked failed.',
  ),
  WEBHOOK_RETENTION_HOURS: integer(1, 24 * 365).prefault('72').describe(
    'Delivered and failed events older than this are deleted from the outbox (hours).',
  ),
  WEBHOOK_EVENTS: list.prefault('plant.created').describe(
    'The change types sent to every subscriber, comma-separated: `plant.created` (the contract\'s new-plant body), `plant.updated`, `plant.deleted` (a `{type, data}` body); each delivery names its type in `webhook-event-type`. Written in the change\'s own transaction.',
  ),
  WEBHOOK_CONNECTIONS: integer(1, 256).prefault('64').describe(
    'Most connections, and attempts at once, per subscriber: also the most events delivered per round trip to it. While creates saturate the event loop the dispatcher uses fewer (down to one, plus one attempt per ten creates).',
  ),
  MAX_CONNECTIONS: integer(1, 1_000_000).optional().describe(
    'Open connections at most. Unset: 1000, or fewer when the open-file limit (`ulimit -n`) leaves room for fewer beside the descriptors open at start (the store, the log, the metrics listener, Node\'s own) and those the configured parts may open later (the PostgreSQL pool, `WEBHOOK_CONNECTIONS` per subscriber, 32 spare); a value above that room is lowered to it, with a warning. The start line `listening` names the cap. At the cap a new connection replaces the longest-idle one (no request in progress for a second or more); only when there is none is the new one closed on accept, before a byte is read.',
  ),
  EVENTS_RETENTION: duration(1000, 365 * 24 * 3_600_000).prefault('24h').describe(
    'The change feed (`GET /plants/events`) keeps each event at least this long, a whole number with `ms`, `s`, `m` or `h`; a client resuming from an older position gets one `reset` event and then the live stream.',
  ),
  EVENTS_MAX_STREAMS: integer(1, 1_000_000).prefault('1000').describe(
    'Change streams open at once in this process, at most; one more is answered 503 (50320) with `Retry-After`. Each stream holds a connection: keep `MAX_CONNECTIONS` above it, with room for ordinary requests.',
  ),
  EVENTS_HEARTBEAT: duration(100, 600_000).prefault('15s').describe(
    'A comment line goes to every change stream this often, so proxies and load balancers do not close it as idle; keep it below their read timeout (the shipped nginx waits 1 h).',
  ),
  EVENTS_STREAM_BUFFER: integer(1, 1_000_000).prefault('1000').describe(
    'Events held for a change stream whose reader is not keeping up, at most; one more and the stream is ended with a `resume` event, and the client resumes from its last event without losing any.',
  ),
  BACKUP_DIR: z.string().optional().describe(
    'Directory of the backups the service takes of its SQLite store (docs/backups.md): every `BACKUP_INTERVAL` a checked copy `plants-<time>.db` with its `.meta.json` sidecar. Unset: none (`plant-store backup` still works). Refused with a PostgreSQL `DATABASE_URL`: use `pg_dump`.',
  ),
  BACKUP_INTERVAL: duration(1000, 7 * 24 * 3_600_000).prefault('1h').describe(
    'Time between two scheduled backups, a whole number with `ms`, `s`, `m` or `h`, at least 1 s; the first comes one interval after start.',
  ),
  BACKUP_KEEP: integer(1, 10_000).prefault('24').describe(
    'Scheduled backups kept in `BACKUP_DIR`; older ones are removed with their sidecars after each new one.',
  ),
});

/** Every variable the service reads; `.env.example` lists the same set (checked by a test). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);

/**
 * Each variable as the schema describes it: its default as written in the environment (undefined: unset by
 * default) and its meaning. `.env.example` and docs/configuration.md are generated from this
 * (tests/helpers/config-reference.ts), and a test checks they are current.
 */
export const CONFIG_REFERENCE: readonly { name: string; default: string | undefined; description: string }[] = Object.entries(envSchema.shape).map(
  ([name, schema]) => {
    const def: { type: string; defaultValue?: unknown } = schema._zod.def;
    return { name, default: def.type === 'prefault' ? String(def.defaultValue) : undefined, description: schema.description ?? '' };
  },
);

export type TokenSource = 'AUTH_TOKENS' | 'AUTH_TOKENS_FILE' | 'AUTH_JWKS_URL' | 'generated';

export type OidcConfig = Readonly<{
  jwksUrl: string;
  issuer: string;
  audience: string;
  clockToleranceS: number;
  jwksCooldownS: number;
  jwksTimeoutMs: number;
}>;

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
  /** MAX_CONNECTIONS as set; the service derives the cap from the open-file limit when unset (src/http/open-files.ts). */
  maxConnections: number | undefined;
  backup: BackupConfig | undefined;
  events: EventsConfig;
}>;

/** The change feed: retention, the heartbeat, and its limits per process. */
export type EventsConfig = Readonly<{ retentionMs: number; heartbeatMs: number; maxStreams: number; bufferEvents: number }>;

/** The service's own backups of its SQLite store; undefined when BACKUP_DIR is not set. */
export type BackupConfig = Readonly<{ dir: string; intervalMs: number; keep: number }>;

/** A subscriber's URL, parsed once here: `url` names it in the outbox and the logs, the rest is where to send. */
export type WebhookSubscriber = Readonly<{ url: string; origin: string; host: string; path: string }>;

/** Subscribers and how to reach them; undefined when no webhook is configured. */
export type WebhookConfig = Readonly<{
  subscribers: readonly WebhookSubscriber[];
  /** Every secret signs each delivery: more than one while subscribers rotate from the old to the new. */
  secrets: readonly string[];
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  retentionHours: number;
  connections: number;
  /** WEBHOOK_EVENTS: plant.created, plant.updated and/or plant.deleted. */
  events: readonly WebhookEventType[];
}>;

export const WEBHOOK_EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

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
  return Object.freeze({
    jwksUrl,
    issuer,
    audience,
    clockToleranceS: env.AUTH_CLOCK_TOLERANCE_S,
    jwksCooldownS: env.AUTH_JWKS_COOLDOWN_S,
    jwksTimeoutMs: env.AUTH_JWKS_TIMEOUT_MS,
  });
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
  const subscribers = urls.map((url): WebhookSubscriber => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`WEBHOOK_URLS: "${url}" is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`WEBHOOK_URLS: "${url}" must be http or https`);
    // Logs name the subscriber by host; credentials in the URL would be one careless log line from leaking.
    if (parsed.username !== '' || parsed.password !== '') throw new ConfigError(`WEBHOOK_URLS: a URL must not carry a user or password (${parsed.host})`);
    return Object.freeze({ url, origin: parsed.origin, host: parsed.host, path: `${parsed.pathname}${parsed.search}` });
  });
  if (new Set(urls).size !== urls.length) throw new ConfigError('WEBHOOK_URLS: a URL is listed twice; each subscriber once');
  const events = [...new Set(env.WEBHOOK_EVENTS)];
  const unknown = events.find((type) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined) throw new ConfigError(`WEBHOOK_EVENTS: "${unknown}" is not a type; use ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  if (events.length === 0) throw new ConfigError(`WEBHOOK_EVENTS: name at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  return Object.freeze({
    subscribers,
    secrets: env.WEBHOOK_SECRET,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE,
    retentionHours: env.WEBHOOK_RETENTION_HOURS,
    connections: env.WEBHOOK_CONNECTIONS,
    events: events as WebhookEventType[],
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
    events: Object.freeze({
      retentionMs: env.EVENTS_RETENTION,
      heartbeatMs: env.EVENTS_HEARTBEAT,
      maxStreams: env.EVENTS_MAX_STREAMS,
      bufferEvents: env.EVENTS_STREAM_BUFFER,
    }),
  });
}
