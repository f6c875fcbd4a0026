import { existsSync, statSync, type Stats } from 'node:fs';
import type { Db } from './database.sqlite';
import { AppError } from '../errors';
import type { Logger } from '../logger';

/**
 * What the SQLite store's faults look like from outside the driver: the file at the configured path no longer
 * being the one open, a lock held by another process, a volume gone read-only or failing. It owns the fault
 * episode /readyz reads and the busy retry schedule of the group commit; it must never block the event loop.
 */

// Conditions that say "not now" rather than "bug": the caller may retry later.
const STORE_FAULT = /^(SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|PROTOCOL)|EROFS|EIO|ENOSPC)/;

const MAX_RETRY_DELAY_MS = 50;

/** A driver or file-system error that means the store cannot take writes now (matched by code, not class). */
export function isStoreFault(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return typeof code === 'string' && STORE_FAULT.test(code);
}

/**
 * A start that would create a fresh store where one evidently existed (a -wal or -shm without its database)
 * is refused: serving an empty store in place of a lost one would answer for data that is gone.
 */
export function refuseLostStore(file: string): void {
  if (existsSync(file)) return;
  const leftovers = ['-wal', '-shm', '-journal'].map((suffix) => file + suffix).filter((name) => existsSync(name));
  if (leftovers.length > 0) {
    throw new Error(
      `the database file ${file} is missing but ${leftovers.join(' and ')} remain: the store existed and was lost or moved; ` +
        'restore the file (or remove the leftovers to start an empty store on purpose)',
    );
  }
}

type Fault = { kind: 'moved' | 'fault'; message: string };

export class SqliteHealth {
  private readonly path: string;
  private readonly identity: Stats | undefined;
  private fault: Fault | undefined;
  private busySince: number | undefined;
  private busyAttempts = 0;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly busyTimeoutMs: number,
  ) {
    this.path = db.name;
    // The file's identity as SQLite opened it. Not through a descriptor of our own: closing any descriptor of
    // the file would drop SQLite's POSIX locks on it (https://www.sqlite.org/howtocorrupt.html, 2.2).
    if (!db.memory) this.identity = statSync(this.path);
  }

  /**
   * From here on a lock is never waited for inside the driver (that would freeze the event loop): the commit
   * retries on timers instead. Called once the store is built: until then the start-up steps that write (the
   * search-key fill) wait in the driver up to DATABASE_BUSY_TIMEOUT_MS, as the migrations do, so a worker started
   * while another one writes waits its turn rather than fail with SQLITE_BUSY; nothing is served yet.
   */
  serve(): void {
    this.db.pragma('busy_timeout = 0');
  }

  /** Throws a store_unavailable AppError when the configured path no longer leads to the open file. */
  verifyFile(): void {
    const problem = this.fileProblem();
    if (problem === undefined) return;
    this.enter({ kind: 'moved', message: problem });
    throw new AppError('store_unavailable', undefined, { cause: new Error(problem) });
  }

  /** Called by the commit after success: the store takes writes again, the episode (if any) ends. */
  committed(): void {
    this.verifyFile();
    this.busySince = undefined;
    this.busyAttempts = 0;
    if (this.fault !== undefined) {
      this.logger.info({ fault: this.fault.message }, 'store fault over: a write succeeded');
      this.fault = undefined;
    }
  }

  /**
   * Called by the commit when it failed: a delay in ms when the store is locked and the batch should be tried
   * again, undefined when the failure stands (recorded as a fault episode when it is a store fault).
   */
  retryDelay(error: unknown): number | undefined {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      const now = performance.now();
      this.busySince ??= now;
      if (now - this.busySince < this.busyTimeoutMs) {
        this.busyAttempts += 1;
        return Math.min(MAX_RETRY_DELAY_MS, 2 ** this.busyAttempts, this.busySince + this.busyTimeoutMs - now);
      }
      this.busySince = undefined;
      this.busyAttempts = 0;
      // A lock is another process at work, not a broken store: no episode, /readyz stays as it was.
      return undefined;
    }
    if (isStoreFault(error)) this.enter({ kind: 'fault', message: `${String(code)}: ${(error as Error).message}` });
    return undefined;
  }

  /** For /readyz: throws store_unavailable while the file is gone, the volume read-only or an episode lasts. */
  assertReady(): void {
    this.verifyFile();
    if (this.db.readonly) throw new AppError('store_unavailable', 'The store is read-only; it cannot take writes.');
    if (this.fault !== undefined) throw new AppError('store_unavailable', 'The store failed its last write; it is not ready until a write succeeds.');
  }

  private fileProblem(): string | undefined {
    if (this.identity === undefined) return undefined;
    let atPath: Stats;
    try {
      atPath = statSync(this.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      return `the database file ${this.path} was deleted or moved while open (${code}); writes would go to an unlinked file`;
    }
    // The open file keeps its inode while open, so another inode (or a link count of 0) at the path means the
    // path leads elsewhere now.
    if (atPath.nlink === 0 || atPath.dev !== this.identity.dev || atPath.ino !== this.identity.ino) {
      return `the database file ${this.path} was replaced by another file while open; writes would not reach it`;
    }
    return undefined;
  }

  /** One line per episode, not per request: error level when the file is lost, warn for I/O and read-only. */
  private enter(fault: Fault): void {
    if (this.fault?.message === fault.message) return;
    const first = this.fault === undefined;
    this.fault = fault;
    if (!first && fault.kind === 'fault') return;
    if (fault.kind === 'moved') this.logger.error({ fault: fault.message }, `store lost: ${fault.message}`);
    else this.logger.warn({ fault: fault.message }, `store fault: ${fault.message}; writes answer 503 until one succeeds`);
  }
}
