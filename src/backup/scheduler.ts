/**
 * The service's own backups of its SQLite store: every interval, the same procedure as `plant-store backup`, into
 * BACKUP_DIR under a dated name, keeping the newest few. Started after the listener, stopped in the drain. A
 * failed backup is logged and counted and never reaches a request: it runs beside them, a bounded step at a time.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger';
import { backupStore, type BackupResult } from './backup';
import { fileStamp } from './files';
import { sidecarPath } from './sidecar';

export type BackupSchedule = { dir: string; intervalMs: number; keep: number };

/** What the scheduler reports, for src/metrics; synchronous and cheap, never throws. */
export type BackupObserver = {
  /** `ahead`: backups in the directory named later than the one just written (see prune). */
  succeeded(result: { bytes: number; seconds: number; finishedAt: Date; ahead: number }): void;
  failed(seconds: number): void;
};

const NAME = /^plants-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.db$/;
// 100 pages of 4 KiB a step: about a millisecond of the event loop each (bench "backup" section).
const PAGES_PER_STEP = 100;

export class BackupScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private abort = new AbortController();
  private stopped = false;
  private announced = false;

  constructor(
    private readonly store: string,
    private readonly schedule: BackupSchedule,
    private readonly busyTimeoutMs: number,
    private readonly logger: Logger,
    private readonly observer?: BackupObserver,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The first backup comes one interval after start: a process restarting in a loop does not rotate good backups out. */
  start(): void {
    if (this.stopped || this.timer !== undefined) return;
    if (!this.announced) {
      this.announced = true;
      this.logger.info({ dir: this.schedule.dir, intervalMs: this.schedule.intervalMs, keep: this.schedule.keep }, 'backups scheduled');
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.runOnce().finally(() => {
        this.running = undefined;
        this.start();
      });
    }, this.schedule.intervalMs);
    // Backups alone never keep the process alive.
    this.timer.unref();
  }

  /** Cancels the next backup and stops one in progress at its next step; resolves when it has cleaned up. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.abort.abort();
    await this.running;
  }

  /** One backup and the pruning after it; resolves either way (a failure is logged and counted here). */
  async runOnce(): Promise<BackupResult | undefined> {
    const started = performance.now();
    const file = path.join(this.schedule.dir, `plants-${fileStamp(this.now())}.db`);
    try {
      const result = await backupStore(this.store, file, { pagesPerStep: PAGES_PER_STEP, busyTimeoutMs: this.busyTimeoutMs, signal: this.abort.signal });
      if (result.removedTemporaries.length > 0) {
        this.logger.info({ dir: this.schedule.dir, removed: result.removedTemporaries }, 'removed the temporary files of a backup that did not finish');
      }
      const { pruned, ahead } = await this.prune(result.file);
      this.logger.info(
        { file: result.file, bytes: result.bytes, plants: result.plants, migration: result.migration, durationMs: Math.round(result.seconds * 1000), pruned },
        'backup written',
      );
      if (ahead.length > 0) {
        this.logger.warn(
          { dir: this.schedule.dir, file: result.file, ahead },
          'backups named later than the one just written are left alone and not counted in BACKUP_KEEP: has the clock gone back, or were they copied in?',
        );
      }
      this.observer?.succeeded({ bytes: result.bytes, seconds: result.seconds, finishedAt: this.now(), ahead: ahead.length });
      return result;
    } catch (err) {
      // Stopped by the drain: not a failure of the backup, and nothing of it is left.
      if (this.stopped) {
        this.logger.info({ file }, 'backup stopped: the service is shutting down');
        return undefined;
      }
      this.logger.error({ err, file }, `backup failed: ${(err as Error).message}`);
      this.observer?.failed((performance.now() - started) / 1000);
      return undefined;
    }
  }

  /**
   * Keeps the newest `keep` backups up to the one just written (by the time in their names) and removes the older
   * ones with their sidecars. A backup named later than the one just written is ahead of this clock (the clock
   * went back, or it was copied in): it is neither counted nor removed, so it can never push the new backup out,
   * and it joins the count once the clock passes its time. The one just written is never removed (keep is at least 1).
   */
  private async prune(written: string): Promise<{ pruned: string[]; ahead: string[] }> {
    const current = path.basename(written);
    const backups = (await readdir(this.schedule.dir)).filter((name) => NAME.test(name)).sort();
    const ahead = backups.filter((name) => name > current);
    const upToNow = backups.filter((name) => name <= current);
    const old = upToNow.slice(0, Math.max(0, upToNow.length - this.schedule.keep));
    for (const name of old) {
      const file = path.join(this.schedule.dir, name);
      // The sidecar last: a backup without one cannot be restored, a sidecar alone is harmless.
      await rm(file, { force: true });
      await rm(sidecarPath(file), { force: true });
    }
    return { pruned: old, ahead };
  }
}
