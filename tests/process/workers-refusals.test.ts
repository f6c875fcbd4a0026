import { startServer } from '../helpers/server-process';
import { childPids, isAlive } from '../helpers/workers';

// Refused by the configuration, before anything opens: no PostgreSQL is needed, the URL is never dialled.
const POSTGRES = 'postgres://nobody@127.0.0.1:1/never';

describe('what WORKERS > 1 refuses at start', () => {
  it('when WORKERS=2 names the SQLite store, then the process exits 1 with one line saying SQLite across workers needs the single writer', async () => {
    const server = await startServer({ WORKERS: '2' }, { expectListening: false });

    const exit = await server.exited;

    expect(exit).toEqual({ code: 1, signal: null });
    expect(server.stderr()).toBe(
      'plant-store: invalid configuration:\n✖ WORKERS: 2 workers on SQLite (DATABASE_URL=file:…) need the single-writer work of issue 36, not built yet; use WORKERS=1 on SQLite, or PostgreSQL\n',
    );
    expect(server.lines).toEqual([]);
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
