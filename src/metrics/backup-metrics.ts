import { Counter, Gauge, type Registry } from 'prom-client';
import type { BackupObserver } from '../backup/scheduler';

/**
 * The scheduled backups' instruments (BACKUP_DIR), fed by the scheduler. An alert on the age of the last success
 * (time() - plants_backup_last_success_timestamp_seconds > 2 × BACKUP_INTERVAL) catches failures and a scheduler
 * that stopped alike; the gauges read 0 until a first backup succeeds.
 */
export function backupMetrics(registers: Registry[]): BackupObserver {
  const lastSuccess = new Gauge({
    name: 'plants_backup_last_success_timestamp_seconds',
    help: 'When the last scheduled backup that succeeded finished, in Unix seconds.',
    registers,
  });
  const duration = new Gauge({
    name: 'plants_backup_last_duration_seconds',
    help: 'How long the last successful scheduled backup took (copy, checks, fsync, rename), in seconds.',
    registers,
  });
  const size = new Gauge({ name: 'plants_backup_last_size_bytes', help: 'Size of the last successful scheduled backup, in bytes.', registers });
  const failures = new Counter({
    name: 'plants_backup_failures_total',
    help: 'Scheduled backups that failed (disk full, directory gone, store unreadable); each is logged at error.',
    registers,
  });
  const future = new Gauge({
    name: 'plants_backup_future_files',
    help: 'Scheduled backups in BACKUP_DIR named later than the last one written (a clock that went back, or files copied in): left alone and not counted in BACKUP_KEEP.',
    registers,
  });
  return {
    succeeded: ({ bytes, seconds, finishedAt, ahead }) => {
      lastSuccess.set(finishedAt.getTime() / 1000);
      duration.set(seconds);
      size.set(bytes);
      future.set(ahead);
    },
    failed: () => failures.inc(),
  };
}
