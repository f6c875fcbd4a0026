/**
 * Backups of the SQLite store: what the service wires (the scheduler) and what the plant-store command uses
 * (backup, restore, and export and import around the transfer a resource hands in). Loaded only when BACKUP_DIR
 * is set or by the command.
 */
export { BackupScheduler, type BackupObserver, type BackupSchedule } from './scheduler';
export { backupStore, type BackupResult } from './backup';
export { restoreStore, type RestoreResult } from './restore';
export { BackupError } from './store-file';
export { readLines } from './lines';
export { exportSqlite, importSqlite } from './transfer.sqlite';
export { exportPostgres, importPostgres } from './transfer.postgres';
export type { PostgresTransfer, SqliteTransfer } from './transfer';
export { ImportError, type Export, type ImportResult } from '../transfer';
