import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

export const MIN_TOKEN_LENGTH = 32;

// Express's own names for address ranges (proxy-addr); anything else must be an address or CIDR.
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const list = z
  .string()
  .transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item !== ''));

const byteSize = z
  .string()
  .regex(/^\d+\s*(b|kb|kib|mb|mib)?$/i, 'must be a number of bytes, optionally with kb or mb (e.g. 16kb)')
  .transform((value) => {
    const [, digits = '0', unit = 'b'] = /^(\d+)\s*([a-z]*)$/i.exec(value) ?? [];
    const multiplier = unit.toLowerCase().startsWith('m') ? 1024 * 1024 : unit.toLowerCase().startsWith('k') ? 1024 : 1;
    return Number(digits) * multiplier;
  })
  .pipe(z.number().int().min(1).max(64 * 1024 * 1024));

export type DatabaseTarget = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

const databaseUrl = z
  .string()
  .regex(
    /^(file:.+|postgres(ql)?:\/\/.+)/,
    'must be file:<path> naming a SQLite file (e.g. file:./data/plants.db) or postgres://user@host:5432/database',
  )
  .transform((value): DatabaseTarget =>
    value.startsWith('file:') ? { dialect: 'sqlite', path: path.resolve(value.slice('file:'.length)) } : { dialect: 'postgres', url: value },
  );

const redisUrl = z.string().regex(/^rediss?:\/\/.+/, 'must be redis://host:6379 (or rediss:// for TLS)');

const origins = list.pipe(
  z.array(
    z.string().refine((origin) => {
      try {
        return new URL(origin).origin === origin;
      } catch {
        return false;
      }
    }, 'each entry must be an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash)'),
  ),
);

const trustProxy = z
  .string()
  .transform((value, ctx): false | number | string[] => {
    const trimmed = value.trim().toLowerCase();
    if (trimmed === 'false' || trimmed === '0' || trimmed === 'off') return false;
    if (trimmed === 'true') {
      ctx.addIssue({
        code: 'custom',
        message: 'true would trust any X-Forwarded-For a client writes; give the hop count (e.g. 1) or the proxy addresses',
      });
      return z.NEVER;
    }
    if (/^\d+$/.test(trimmed)) return Number(trimmed);
    const entries = trimmed.split(',').map((entry) => entry.trim()).filter(Boolean);
    for (const entry of entries) {
      const [address = '', prefix, extra] = entry.split('/');
      const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (isIP(address) === 6 ? 128 : 32));
      if (!(PROXY_RANGE_NAMES.has(entry) || (isIP(address) !== 0 && prefixOk && extra === undefined))) {
        ctx.addIssue({ code: 'custom', message: `"${entry}" is not a hop count, an IP address, a CIDR range or loopback/linklocal/uniquelocal` });
        return z.NEVER;
      }
    }
    return entries;
  });

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
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).prefault('info'),
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
});

/** Every variable the service reads; `.env.example` lists the same set (checked by a test). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);

export type TokenSource = 'AUTH_TOKENS' | 'AUTH_TOKENS_FILE' | 'generated';

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
  tokenSource: TokenSource;
  logLevel: string;
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
}>;

export class ConfigError extends Error {}

function readTokensFile(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`AUTH_TOKENS_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function resolveTokens(
  env: z.infer<typeof envSchema>,
  generate: () => string,
): { authTokens: string[]; tokenSource: TokenSource } {
  const fromEnv = env.AUTH_TOKENS ?? [];
  const fromFile = env.AUTH_TOKENS_FILE === undefined ? [] : readTokensFile(env.AUTH_TOKENS_FILE);
  if (env.AUTH_TOKENS_FILE !== undefined && fromFile.length === 0) {
    throw new ConfigError(`AUTH_TOKENS_FILE: ${env.AUTH_TOKENS_FILE} holds no token`);
  }
  for (const [name, tokens] of [['AUTH_TOKENS', fromEnv], ['AUTH_TOKENS_FILE', fromFile]] as const) {
    const tooShort = tokens.findIndex((token) => token.length < MIN_TOKEN_LENGTH);
    if (tooShort !== -1) {
      throw new ConfigError(`${name}: token ${tooShort + 1} is shorter than ${MIN_TOKEN_LENGTH} characters`);
    }
    if (tokens.some((token) => /\s/.test(token))) {
      throw new ConfigError(`${name}: a token must not contain white space`);
    }
  }
  if (fromEnv.length + fromFile.length > 0) {
    return { authTokens: [...fromEnv, ...fromFile], tokenSource: fromFile.length > 0 ? 'AUTH_TOKENS_FILE' : 'AUTH_TOKENS' };
  }
  if (env.NODE_ENV === 'production') {
    throw new ConfigError('AUTH_TOKENS or AUTH_TOKENS_FILE must be set when NODE_ENV=production');
  }
  return { authTokens: [generate()], tokenSource: 'generated' };
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
    logLevel: env.LOG_LEVEL,
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
  });
}
