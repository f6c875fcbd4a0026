import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { errorOf as messageOf } from '../helpers/common';

const TOKEN = 'a'.repeat(32);
const generate = () => 'generated-token';

const errorOf = (env: Record<string, string>): string => messageOf(() => loadConfig(env, generate));

describe('loadConfig', () => {
  it('when nothing is set outside production, then the defaults apply and one token is generated', () => {
    const config = loadConfig({}, generate);

    expect(config).toEqual({
      nodeEnv: 'development',
      port: 3000,
      host: '127.0.0.1',
      database: { dialect: 'sqlite', path: path.resolve('data/plants.db') },
      databaseBusyTimeoutMs: 2000,
      databasePoolSize: 10,
      databaseStatementTimeoutMs: 5000,
      databaseConnectTimeoutMs: 2000,
      authTokens: ['generated-token'],
      authTokensFile: undefined,
      tokenSource: 'generated',
      oidc: undefined,
      logLevel: 'info',
      logBufferBytes: 4194304,
      bodyLimitBytes: 16384,
      batchBodyLimitBytes: 1048576,
      corsOrigins: [],
      trustProxy: false,
      rateLimitPerMinute: 1200,
      redisUrl: undefined,
      redisKeyPrefix: 'plant-store:rate-limit:',
      shutdownTimeoutMs: 10000,
      loadShedLagMs: 100,
      headersTimeoutMs: 10000,
      requestTimeoutMs: 30000,
      keepAliveTimeoutMs: 65000,
      metricsPort: 9464,
      metricsHost: '127.0.0.1',
      docsEnabled: true,
      webhooks: undefined,
      maxConnections: undefined,
      backup: undefined,
      events: { retentionMs: 86_400_000, heartbeatMs: 15_000, maxStreams: 1000, bufferEvents: 1000 },
      idempotencyTtlMs: 86_400_000,
      workers: os.availableParallelism(),
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('when values are given as strings, then they are parsed into typed settings', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'file:/var/lib/plants/p.db',
      AUTH_TOKENS: ` ${TOKEN} , ${'b'.repeat(40)} `,
      BODY_LIMIT: '1mb',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
      TRUST_PROXY: '10.0.0.0/8, loopback, ::1',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
    });

    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      database: { dialect: 'sqlite', path: '/var/lib/plants/p.db' },
      authTokens: [TOKEN, 'b'.repeat(40)],
      tokenSource: 'AUTH_TOKENS',
      bodyLimitBytes: 1024 * 1024,
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      trustProxy: ['10.0.0.0/8', 'loopback', '::1'],
      rateLimitPerMinute: 0,
      logLevel: 'warn',
    });
  });

  it('when TRUST_PROXY covers much but not every address, or uses a netmask, then it is accepted', () => {
    expect(loadConfig({ TRUST_PROXY: '0.0.0.0/1, 10.0.0.0/255.0.0.0, ::/1' }, generate).trustProxy).toEqual(['0.0.0.0/1', '10.0.0.0/255.0.0.0', '::/1']);
  });

  it('when AUTH_TOKENS has a character outside RFC 6750 token syntax, then it names the variable and the rule', () => {
    expect(errorOf({ AUTH_TOKENS: `${'a'.repeat(32)}"quoted"` })).toBe(
      "AUTH_TOKENS: token 1 has characters outside RFC 6750's token syntax (A-Z a-z 0-9 - . _ ~ + / and = at the end)",
    );
  });

  it.each([
    ['postgres://plants@db:5432/plants', { dialect: 'postgres', url: 'postgres://plants@db:5432/plants' }],
    ['postgresql://db/plants', { dialect: 'postgres', url: 'postgresql://db/plants' }],
    ['file:/srv/p.db', { dialect: 'sqlite', path: '/srv/p.db' }],
  ])('when DATABASE_URL is %s, then the store is %p', (value, expected) => {
    expect(loadConfig({ DATABASE_URL: value }, generate).database).toEqual(expected);
  });

  it.each([
    ['1', 1],
    ['2', 2],
    ['false', false],
    ['', false],
  ])('when TRUST_PROXY is "%s", then trust proxy is %p', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }, generate).trustProxy).toEqual(expected);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '' + '-1' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://db/plants' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres:/db' }, 'DATABASE_URL'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '1000', DATABASE_CONNECT_TIMEOUT_MS: '1000' }, 'DATABASE_CONNECT_TIMEOUT_MS'],
    [{ BODY_LIMIT: 'lots' }, 'BODY_LIMIT'],
    [{ CORS_ORIGINS: 'https://app.example.com/' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: '*' }, 'CORS_ORIGINS'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'proxy.example.com' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/40' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0.0.0.0/0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::/0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0.0.0.0/1, 128.0.0.0/1' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::ffff:0.0.0.0/96' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/255.0.255.0' }, 'TRUST_PROXY'],
    [{ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '10000' }, 'REQUEST_TIMEOUT_MS'],
    [{ AUTH_TOKENS: `${'a'.repeat(32)}@example` }, 'AUTH_TOKENS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ RATE_LIMIT_PER_MINUTE: '1.5' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ SHUTDOWN_TIMEOUT_MS: 'soon' }, 'SHUTDOWN_TIMEOUT_MS'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
  ])('when %p, then it refuses and names %s', (env, name) => {
    expect(errorOf(env as Record<string, string>)).toContain(name);
  });

  it('when a token is shorter than 32 characters, then it refuses and names the variable', () => {
    expect(errorOf({ AUTH_TOKENS: `${TOKEN},short` })).toBe('AUTH_TOKENS: token 2 is shorter than 32 characters');
  });

  it('when NODE_ENV=production and no token is set, then it refuses to start', () => {
    expect(errorOf({ NODE_ENV: 'production' })).toBe(
      'AUTH_TOKENS or AUTH_TOKENS_FILE must be set when NODE_ENV=production (or AUTH_JWKS_URL to accept JWT access tokens only)',
    );
  });

  it('when AUTH_TOKENS_FILE is set, then its path is kept for the token store and no token is generated', () => {
    const config = loadConfig({ AUTH_TOKENS_FILE: '/run/secrets/auth_tokens', NODE_ENV: 'production' }, generate);

    expect({ tokens: config.authTokens, file: config.authTokensFile, source: config.tokenSource }).toEqual({
      tokens: [],
      file: '/run/secrets/auth_tokens',
      source: 'AUTH_TOKENS_FILE',
    });
  });

  it('when AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE are set, then OIDC is on and production needs no static token', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      AUTH_JWKS_URL: 'https://id.example.com/realms/plants/protocol/openid-connect/certs',
      AUTH_ISSUER: 'https://id.example.com/realms/plants',
      AUTH_AUDIENCE: 'plant-store',
      AUTH_CLOCK_TOLERANCE_S: '5',
    }, generate);

    expect({ oidc: config.oidc, tokens: config.authTokens, source: config.tokenSource }).toEqual({
      oidc: {
        jwksUrl: 'https://id.example.com/realms/plants/protocol/openid-connect/certs',
        issuer: 'https://id.example.com/realms/plants',
        audience: 'plant-store',
        clockToleranceS: 5,
        jwksCooldownS: 30,
        jwksTimeoutMs: 5000,
      },
      tokens: [],
      source: 'AUTH_JWKS_URL',
    });
  });

  it.each([
    [{ AUTH_JWKS_URL: 'https://id.example.com/certs' }],
    [{ AUTH_JWKS_URL: 'https://id.example.com/certs', AUTH_ISSUER: 'https://id.example.com' }],
    [{ AUTH_ISSUER: 'https://id.example.com', AUTH_AUDIENCE: 'plant-store' }],
  ])('when only some of the OIDC variables are set (%p), then it refuses and names all three', (env) => {
    expect(errorOf(env)).toBe('AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE go together: set all three to accept JWT access tokens, or none');
  });

  it.each([
    [{ AUTH_JWKS_URL: 'http://id.example.com/certs' }, 'AUTH_JWKS_URL'],
    [{ AUTH_JWKS_URL: 'not a url' }, 'AUTH_JWKS_URL'],
    [{ AUTH_CLOCK_TOLERANCE_S: '301' }, 'AUTH_CLOCK_TOLERANCE_S'],
    [{ AUTH_JWKS_COOLDOWN_S: '-1' }, 'AUTH_JWKS_COOLDOWN_S'],
    [{ AUTH_JWKS_COOLDOWN_S: '0' }, 'AUTH_JWKS_COOLDOWN_S'],
    [{ AUTH_JWKS_TIMEOUT_MS: '99' }, 'AUTH_JWKS_TIMEOUT_MS'],
  ])('when %p, then it refuses and names %s', (env, name) => {
    expect(errorOf(env as Record<string, string>)).toContain(name);
  });

  it('when the JWKS URL is plain http on loopback, then it is accepted (a local provider)', () => {
    const config = loadConfig({ AUTH_JWKS_URL: 'http://127.0.0.1:8080/certs', AUTH_ISSUER: 'http://127.0.0.1:8080', AUTH_AUDIENCE: 'plants' }, generate);

    expect(config.oidc?.jwksUrl).toBe('http://127.0.0.1:8080/certs');
  });

  it('when metrics and docs are configured, then METRICS_PORT 0 turns metrics off and DOCS_ENABLED=false the page', () => {
    const config = loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0', DOCS_ENABLED: 'false' }, generate);

    expect(config).toMatchObject({ metricsPort: 0, metricsHost: '0.0.0.0', docsEnabled: false });
  });

  it.each([
    [{ METRICS_PORT: '3000' }, 'METRICS_PORT must differ from PORT'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    [{ DOCS_ENABLED: 'yes' }, 'DOCS_ENABLED'],
  ])('when %j is given, then the start is refused naming the variable', (env, expected) => {
    expect(errorOf(env)).toContain(expected);
  });
});
