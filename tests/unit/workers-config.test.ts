import os from 'node:os';
import { loadConfig, poolPerWorker } from '../../src/config';
import { resolveWorkers } from '../../src/config/workers';
import { Restarts } from '../../src/supervisor/restarts';
import { errorOf as messageOf } from '../helpers/common';

const POSTGRES = { DATABASE_URL: 'postgres://plants@db:5432/plants', RATE_LIMIT_PER_MINUTE: '0', METRICS_PORT: '0', AUTH_TOKENS: 'a'.repeat(32) };
const errorOf = (env: Record<string, string>): string => messageOf(() => loadConfig(env));

describe('WORKERS', () => {
  it('when it is unset, then one worker per core the process may use serves, whatever the store', () => {
    expect([loadConfig({}).workers, loadConfig(POSTGRES).workers]).toEqual([os.availableParallelism(), os.availableParallelism()]);
  });

  it('when it is a number on PostgreSQL with the per-process settings off, then that many workers serve', () => {
    expect([loadConfig({ ...POSTGRES, WORKERS: '4' }).workers, loadConfig({ ...POSTGRES, WORKERS: '1024' }).workers]).toEqual([4, 1024]);
  });

  it('when it is auto, then it is the cores the process may use, at least 1 and at most 1024', () => {
    expect([resolveWorkers('auto', () => 6), resolveWorkers('auto', () => 0), resolveWorkers('auto', () => 4096), resolveWorkers(3, () => 6)]).toEqual([6, 1, 1024, 3]);
  });

  it.each(['0', '1025', 'two', '2.5', 'AUTO'])('when it is %s, then the start is refused naming WORKERS and what it must be', (value) => {
    expect(errorOf({ ...POSTGRES, WORKERS: value })).toContain('WORKERS');
    expect(errorOf({ ...POSTGRES, WORKERS: value })).toContain('must be auto or a whole number from 1 to 1024');
  });

  it('when WORKERS=2 names a SQLite file, then the configuration passes (the workers take the write lock in turn)', () => {
    expect(loadConfig({ WORKERS: '2', RATE_LIMIT_PER_MINUTE: '0', METRICS_PORT: '0' })).toMatchObject({ workers: 2, database: { dialect: 'sqlite' } });
  });

  it('when a rate limit is on at WORKERS=2 without REDIS_URL, then the start goes on: the supervisor counts it', () => {
    expect(loadConfig({ ...POSTGRES, WORKERS: '2', RATE_LIMIT_PER_MINUTE: '60' }).rateLimitPerMinute).toBe(60);
    expect(loadConfig({ ...POSTGRES, WORKERS: '2', TENANT_CLAIM: 'sub', RATE_LIMIT_PER_TENANT_PER_MINUTE: '60' }).tenants?.perTenantPerMinute).toBe(60);
    expect(loadConfig({ ...POSTGRES, WORKERS: '2', RATE_LIMIT_PER_MINUTE: '60', REDIS_URL: 'redis://cache:6379' }).rateLimitPerMinute).toBe(60);
  });

  it('when DATABASE_POOL_SIZE is split, then each worker gets its share rounded up, at least 2, and one process the whole', () => {
    expect([poolPerWorker(10, 1), poolPerWorker(10, 4), poolPerWorker(10, 8), poolPerWorker(1, 2), poolPerWorker(100, 3)]).toEqual([10, 3, 2, 2, 34]);
  });
});

describe('restarting workers', () => {
  it('when one slot keeps exiting early, then its restarts wait 0, 100, 200, … up to 10 s, and another slot starts at 0', () => {
    const restarts = new Restarts(100, () => 0);

    const delays = Array.from({ length: 10 }, () => restarts.exited(1, 1000).restartInMs);

    expect(delays).toEqual([0, 100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
    expect(restarts.exited(2, 0).restartInMs).toBe(0);
  });

  it('when a worker served 30 s before exiting, then its slot restarts at once again', () => {
    const restarts = new Restarts(2, () => 0);
    restarts.exited(1, 0);
    restarts.exited(1, 0);

    expect(restarts.exited(1, 30_000).restartInMs).toBe(0);
  });

  it('when exits pass max(5, 2 × workers) within a minute, then it is a crash loop; older exits no longer count', () => {
    let now = 0;
    const two = new Restarts(2, () => now);
    const eight = new Restarts(8, () => now);

    const twoVerdicts = Array.from({ length: 6 }, (_, i) => two.exited(i % 2, 0).crashLoop);
    const eightVerdicts = Array.from({ length: 17 }, (_, i) => eight.exited(i % 8, 0).crashLoop);
    now = 60_000;

    expect(twoVerdicts).toEqual([false, false, false, false, false, true]);
    expect(eightVerdicts.indexOf(true)).toBe(16);
    expect(two.exited(1, 0)).toEqual({ restartInMs: 400, exitsLastMinute: 1, crashLoop: false });
  });
});
