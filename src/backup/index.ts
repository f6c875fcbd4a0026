/**
 * Backups of the SQLite store: what the service wires (the scheduler) and what the plant-store command uses
 * (backup, restore, export, import). Loaded only when BACKUP_DIR is set or by the command.
 */
export { BackupScheduler, type BackupObserver, type BackupSchedule } from './scheduler';
export { backupStore, type BackupResult } from './backup';
export { restoreStore, type RestoreResult } from './restore';
export { BackupError } from './store-file';
export { readLines } from './plant-lines';
export { ImportError } from '../plants/plant.transfer';
export { exportSqlite, importSqlite } from './sqlite-plants';
export { exportPostgres, importPostgres } from './postgres-plants';
export type { ImportResult, PlantExport } from '../plants/plant.transfer';
