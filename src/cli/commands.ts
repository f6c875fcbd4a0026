/** The plant-store commands: each a summary, its options (all strings) and what it does. */
import { once } from 'node:events';
import os from 'node:os';
import { backupStore, BackupError, exportPostgres, exportSqlite, importPostgres, importSqlite, readLines, restoreStore } from '../backup';
import type { Export, ImportResult } from '../backup';
import type { DatabaseTarget } from '../config/fields';
import { postgresPlantTransfer } from '../plants/plant.transfer.postgres';
import { sqlitePlantTransfer } from '../plants/plant.transfer.sqlite';
import { describeTarget, loadCliConfig, parseTarget, postgresOptions, UsageError, type CliConfig } from './cli-config';

type Option = { value?: string; help: string };

export type Command = {
  summary: string;
  usage: string;
  description: string;
  options: Record<string, Option>;
  run: (values: Record<string, string | undefined>) => Promise<void>;
};

const DATABASE: Option = { value: 'URL', help: 'the store: file:<path> or postgres://… (default: DATABASE_URL)' };

// Steps of the command's own backup: it runs in its own process, so a step blocks no request of the service.
const COMMAND_PAGES_PER_STEP = 1000;

const required = (values: Record<string, string | undefined>, flag: string): string => {
  const value = values[flag];
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required (see --help)`);
  return value;
};

const configOf = (values: Record<string, string | undefined>): CliConfig => loadCliConfig(process.env, values.database);

function sqlitePath(target: DatabaseTarget, command: string): string {
  if (target.dialect === 'sqlite') return target.path;
  throw new BackupError(
    `${command} works on the SQLite store; for PostgreSQL use its own tools (pg_dump -Fc, pg_restore; see docs/backups.md), or plant-store export`,
  );
}

// What export, import and copy carry: plants, the one resource whose records the command moves.
async function openExport(target: DatabaseTarget, config: CliConfig): Promise<Export> {
  return target.dialect === 'sqlite'
    ? exportSqlite(target.path, config.busyTimeoutMs, sqlitePlantTransfer)
    : exportPostgres(postgresOptions(target.url, config), postgresPlantTransfer);
}

function runImport(target: DatabaseTarget, config: CliConfig, input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): Promise<ImportResult> {
  const lines = readLines(input, 'plant');
  return target.dialect === 'sqlite'
    ? importSqlite(target.path, lines, config.busyTimeoutMs, sqlitePlantTransfer, config.defaultTenant)
    : importPostgres(postgresOptions(target.url, config), lines, postgresPlantTransfer, config.defaultTenant);
}

const say = (text: string) => process.stdout.write(`${text}\n`);

/** A command reading beside a live service yields the CPU to it: nice 10, as `nice plant-store …` would. */
function yieldToService(): void {
  try {
    os.setPriority(10);
  } catch {
    // Not permitted here (a container without the capability to renice): run at normal priority.
  }
}

export const COMMANDS: Record<string, Command> = {
  backup: {
    summary: 'an online, checked copy of the SQLite store, with its sidecar',
    usage: '--to FILE [--database URL]',
    description:
      'Copies the SQLite store while the service keeps serving (SQLite backup API, one snapshot), checks the copy\n' +
      '(integrity, migration level), fsyncs it, and renames it to FILE; FILE.meta.json beside it holds its SHA-256,\n' +
      'plant count and migration level. FILE must not exist, nor end in -journal, -wal or -shm (SQLite owns those\n' +
      'names beside a database). Temporary files of a killed backup in the same directory are removed first.',
    options: { to: { value: 'FILE', help: 'where the backup goes (a new file)' }, database: DATABASE },
    run: async (values) => {
      const to = required(values, 'to');
      const config = configOf(values);
      yieldToService();
      const result = await backupStore(sqlitePath(config.database, 'backup'), to, { pagesPerStep: COMMAND_PAGES_PER_STEP, busyTimeoutMs: config.busyTimeoutMs });
      for (const name of result.removedTemporaries) say(`removed ${name}, left by a backup that did not finish`);
      say(
        `backed up ${describeTarget(config.database)} to ${result.file}: ${result.plants} plants, migration ${result.migration ?? 'none'}, ` +
          `${result.bytes} bytes, sha256 ${result.sha256}, in ${result.seconds.toFixed(2)} s; sidecar ${result.sidecar}`,
      );
    },
  },
  restore: {
    summary: 'put a checked backup in place of the SQLite store (service stopped)',
    usage: '--from FILE [--database URL]',
    description:
      'Checks FILE against FILE.meta.json (size, SHA-256), then its integrity, migration level (not newer than this\n' +
      'build) and plant count, and puts it in place of the store. Refuses while any process has the store open\n' +
      '(its exclusive lock is taken): stop the service first. The replaced store is kept beside it as\n' +
      '<store>.replaced-<time>.',
    options: { from: { value: 'FILE', help: 'the backup to restore (with its .meta.json)' }, database: DATABASE },
    run: async (values) => {
      const from = required(values, 'from');
      const config = configOf(values);
      const result = await restoreStore(from, sqlitePath(config.database, 'restore'));
      say(`checked ${result.from}: sha256 ${result.sha256} as its sidecar says, integrity ok, ${result.plants} plants, migration ${result.migration ?? 'none'}`);
      if (result.replaced !== undefined) say(`kept the store that was at ${result.target} as ${result.replaced}`);
      say(`restored ${result.from} to ${result.target}${result.replaced === undefined ? ' (no store was there)' : ''}; start the service to serve it`);
    },
  },
  export: {
    summary: 'write every plant to stdout as NDJSON, one {"id","name","tag"} a line',
    usage: '[--database URL] > plants.ndjson',
    description:
      'Writes the plants of one snapshot in id order, one JSON object a line, ids exact; works on both stores and\n' +
      'beside a running service. The count goes to stderr. With tenants, each tenant\'s plants in turn, a line of a\n' +
      'tenant other than the default one (TENANT_DEFAULT\'s) naming it first: {"tenant":"acme","id":…}.',
    options: { database: DATABASE },
    run: async (values) => {
      const config = configOf(values);
      yieldToService();
      const source = await openExport(config.database, config);
      let lines = 0;
      for await (const chunk of source.chunks()) {
        lines += countLines(chunk);
        if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
      }
      process.stderr.write(`exported ${lines} plants from ${describeTarget(config.database)}\n`);
    },
  },
  import: {
    summary: 'read NDJSON plants from stdin into the store, all or nothing',
    usage: '[--database URL] < plants.ndjson',
    description:
      'Reads one plant a line ({"id":…,"name":…,"tag":…}) and stores them in one transaction: a new store gets its\n' +
      "schema from the service's migrations; a plant already stored the same is left as it is (importing twice\n" +
      'changes nothing); a malformed line or one that differs from a stored plant stops the import with its line\n' +
      'number and leaves the plants as they were. On SQLite it holds the write lock until it ends. A line naming a\n' +
      'tenant ("tenant":"acme") goes to that tenant, one naming TENANT_DEFAULT or none to the default tenant.',
    options: { database: DATABASE },
    run: async (values) => {
      const config = configOf(values);
      const result = await runImport(config.database, config, process.stdin);
      say(`imported ${result.lines} lines into ${describeTarget(config.database)}: ${result.inserted} new plants, ${result.unchanged} already stored; it now holds ${result.after}`);
    },
  },
  copy: {
    summary: 'copy every plant from the store to another (e.g. SQLite to PostgreSQL)',
    usage: '--to URL [--database URL]',
    description:
      'Export from the store plus import into --to in one step, counts checked at the end: every plant of the\n' +
      "source's snapshot is in the target. Stop writes to the source first when moving a live deployment\n" +
      '(docs/backups.md).',
    options: { to: { value: 'URL', help: 'the target store: postgres://… or file:<path>' }, database: DATABASE },
    run: async (values) => {
      const to = parseTarget(required(values, 'to'), '--to');
      const config = configOf(values);
      const source = await openExport(config.database, config);
      const result = await runImport(to, config, source.chunks());
      if (result.lines !== source.total || result.inserted + result.unchanged !== source.total) {
        throw new BackupError(`the source held ${source.total} plants but ${result.lines} were copied; check the target`);
      }
      say(
        `copied ${source.total} plants from ${describeTarget(config.database)} to ${describeTarget(to)}: ${result.inserted} new, ` +
          `${result.unchanged} already there; the target held ${result.before} and now holds ${result.after}`,
      );
    },
  },
};

function countLines(chunk: string): number {
  let count = 0;
  for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) count += 1;
  return count;
}
