import path from 'node:path';
import { loadConfig } from '../../src/config';

const generate = () => 'generated-token';

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig(env, generate);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('loadConfig: BACKUP_DIR, BACKUP_INTERVAL, BACKUP_KEEP', () => {
  it('when BACKUP_DIR is not set, then the service takes no backups', () => {
    expect(loadConfig({ BACKUP_INTERVAL: '5m' }, generate).backup).toBeUndefined();
  });

  it('when only BACKUP_DIR is set, then a backup every hour, the newest 24 kept, in that directory made absolute', () => {
    expect(loadConfig({ BACKUP_DIR: 'backups' }, generate).backup).toEqual({ dir: path.resolve('backups'), intervalMs: 3_600_000, keep: 24 });
  });

  it('when the interval and the count are given, then they are parsed with their units', () => {
    expect(loadConfig({ BACKUP_DIR: '/b', BACKUP_INTERVAL: '30m', BACKUP_KEEP: '7' }, generate).backup).toEqual({ dir: '/b', intervalMs: 1_800_000, keep: 7 });
  });

  it.each([
    [{ BACKUP_DIR: '/b', BACKUP_INTERVAL: '1 hour' }, 'BACKUP_INTERVAL'],
    [{ BACKUP_DIR: '/b', BACKUP_INTERVAL: '10ms' }, 'BACKUP_INTERVAL'],
    [{ BACKUP_DIR: '/b', BACKUP_KEEP: '0' }, 'BACKUP_KEEP'],
    [{ BACKUP_DIR: '/b', DATABASE_URL: 'postgres://db/plants' }, 'BACKUP_DIR: the service backs up its SQLite store only'],
  ])('when %j is given, then the start is refused naming the variable', (env, expected) => {
    expect(errorOf(env)).toContain(expected);
  });
});
