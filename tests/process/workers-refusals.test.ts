import { startServer } from '../helpers/server-process';
import { childPids, isAlive } from '../helpers/workers';

// Refused by the configuration, before anything opens: no PostgreSQL is needed, the URL is never dialled.
const POSTGRES = 'postgres://nobody@127.0.0.1:1/never';

describe('what WORKERS > 1 refuses at start', () => {
  it.each([
    ['RATE_LIMIT_PER_MINUTE', { RATE_LIMIT_PER_MINUTE: '100' }, 'RATE_LIMIT_PER_MINUTE: with WORKERS=3 each worker would count on its own and allow 3 times the limit; set REDIS_URL to share the counters, RATE_LIMIT_PER_MINUTE=0 to turn the limit off, or WORKERS=1'],
    ['RATE_LIMIT_PER_TENANT_PER_MINUTE', { TENANT_CLAIM: 'sub', RATE_LIMIT_PER_TENANT_PER_MINUTE: '100' }, 'RATE_LIMIT_PER_TENANT_PER_MINUTE: with WORKERS=3 each worker would count on its own and allow 3 times the limit; set REDIS_URL to share the counters, RATE_LIMIT_PER_TENANT_PER_MINUTE=0 to turn the limit off, or WORKERS=1'],
  ])('when WORKERS=3 on PostgreSQL meets %s kept per process, then the process exits 1 with the line naming it', async (_name, env, line) => {
    const server = await startServer({ WORKERS: '3', DATABASE_URL: POSTGRES, ...env }, { expectListening: false });

    const exit = await server.exited;

    expect(exit).toEqual({ code: 1, signal: null });
    expect(server.stderr()).toBe(`plant-store: invalid configuration:\n✖ ${line}\n`);
  });

  it('when the rate limit counters are in Redis, then WORKERS=3 on PostgreSQL passes the configuration', async () => {
    const server = await startServer(
      { WORKERS: '3', DATABASE_URL: POSTGRES, RATE_LIMIT_PER_MINUTE: '100', REDIS_URL: 'redis://127.0.0.1:1', DATABASE_CONNECT_TIMEOUT_MS: '200', DATABASE_STATEMENT_TIMEOUT_MS: '300', SHUTDOWN_TIMEOUT_MS: '500' },
      { expectListening: false },
    );

    await server.waitForLine((line) => line.msg === 'starting workers');
    const pids = childPids(server.child.pid ?? 0);
    await server.stop('SIGTERM');

    expect(server.stderr()).toBe('');
    expect(pids.filter(isAlive)).toEqual([]);
  });
});
