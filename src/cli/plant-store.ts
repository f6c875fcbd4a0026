#!/usr/bin/env node
/**
 * plant-store: the operator's command beside the service. backup and restore of the SQLite store, export and
 * import of plants as NDJSON on either store, copy from one store to another. Reads the service's DATABASE_URL
 * (or --database). Data goes to stdout (export) or comes from stdin (import); what was done goes to stderr for
 * export and to stdout otherwise; a failure prints one line on stderr and exits 1, a usage error exits 2.
 */
// First: an older node stops with one line before the driver can crash it.
import '../node-version';
import { parseArgs } from 'node:util';
import { COMMANDS, type Command } from './commands';
import { UsageError } from './cli-config';

const USAGE = `Usage: plant-store <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(8)} ${command.summary}`)
  .join('\n')}

plant-store <command> --help shows a command's options. The store is DATABASE_URL (default file:./data/plants.db)
unless --database names another.
`;

function helpOf(name: string, command: Command): string {
  const options = Object.entries(command.options)
    .map(([flag, option]) => `  --${flag}${option.value === undefined ? '' : ` ${option.value}`}`.padEnd(30) + option.help)
    .join('\n');
  return `Usage: plant-store ${name} ${command.usage}\n\n${command.description}\n\nOptions:\n${options}\n  --help${' '.repeat(22)}this text\n`;
}

const EXPECTED = new Set(['BackupError', 'ImportError', 'UsageError', 'MigrationError']);

function withCode(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(`plant-store: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(Object.entries(command.options).map(([flag]) => [flag, { type: 'string' as const }])),
      },
    }));
  } catch (error) {
    process.stderr.write(`plant-store ${name}: ${(error as Error).message}\n\n${helpOf(name, command)}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(helpOf(name, command));
    return 0;
  }
  try {
    await command.run(values as Record<string, string | undefined>);
    return 0;
  } catch (error) {
    // Our own refusals and errors with a code (ENOSPC, ECONNREFUSED, SQLITE_FULL…) are a sentence; anything else a bug.
    const sentence = error instanceof Error && (EXPECTED.has(error.constructor.name) || typeof (error as { code?: unknown }).code === 'string');
    process.stderr.write(`plant-store ${name}: ${sentence ? withCode(error) : String((error as Error).stack ?? error)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`plant-store: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
