import { startServer } from '../helpers/server-process';
import { childPids, isAlive } from '../helpers/workers';

// The configuration passes before anything opens: no PostgreSQL is needed, the URL is never dialled.
const POSTGRES = 'postgres://nobody@127.0.0.1:1/never';

// Nothing is refused at WORKERS > 1 any more (SQLite takes the write turn, rate limits the supervisor's credits).
describe('WORKERS > 1 at start', () => {
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
