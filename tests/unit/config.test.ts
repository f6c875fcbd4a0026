import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';

const TOKEN = 'a'.repeat(32);
const generate = () => 'generated-token';

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig(env, generate);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('loadConfig accepted the environment');
}

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
      tokenSource: 'generated',
      logLevel: 'info',
      bodyLimitBytes: 16384,
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
    expect(errorOf({ NODE_ENV: 'production' })).toBe('AUTH_TOKENS or AUTH_TOKENS_FILE must be set when NODE_ENV=production');
  });

  it('when AUTH_TOKENS_FILE names a file, then its non-blank, non-comment lines are the tokens', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-config-'));
    const file = path.join(dir, 'tokens');
    writeFileSync(file, `# front-end\r\n${TOKEN}\r\n\r\n${'c'.repeat(33)}\n`);

    const config = loadConfig({ AUTH_TOKENS_FILE: file, NODE_ENV: 'production' }, generate);

    expect({ tokens: config.authTokens, source: config.tokenSource }).toEqual({ tokens: [TOKEN, 'c'.repeat(33)], source: 'AUTH_TOKENS_FILE' });
  });

  it('when AUTH_TOKENS_FILE cannot be read or holds no token, then it refuses and names it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-config-'));
    const empty = path.join(dir, 'empty');
    writeFileSync(empty, '# nothing\n\n');

    expect(errorOf({ AUTH_TOKENS_FILE: path.join(dir, 'missing') })).toMatch(/^AUTH_TOKENS_FILE: cannot read .*missing \(ENOENT\)$/);
    expect(errorOf({ AUTH_TOKENS_FILE: empty })).toBe(`AUTH_TOKENS_FILE: ${empty} holds no token`);
  });
});
