// Backups, export and import on a store of STORED plants (1,000,000 by default): how long `plant-store backup`,
// `export` and `import` (into PostgreSQL) take and the memory each peaks at, and what creates keep of their
// throughput while backups run, in alternating rounds: none; the command beside the service in a loop (another
// process, as `podman exec` runs it); the service's own scheduled backups back to back (BACKUP_INTERVAL=1s).
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { storeOfPlants } from './create.section';
import { alternate, CONNECTIONS, f1, f2, failures, freshStore, measureRunning, ROOT, ROUNDS, row, SECONDS, start, STORED, TABLE_HEAD, throughputRatio, WARMUP_SECONDS, work, type Figures, type SectionResult } from './lib';

const CLI = path.join(ROOT, 'dist', 'cli', 'plant-store.js');
const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

type Timed = { seconds: number; cpuSeconds: number; peakRssMiB: number; code: number | null; stderr: string };

/**
 * Runs the built command under /usr/bin/time: wall seconds, CPU seconds (user + system: steadier than wall time on a
 * shared machine) and peak RSS, the kernel's own counts for the process.
 */
function timedCli(args: string[], env: Record<string, string>, io: { stdin?: string; stdout?: string } = {}): Promise<Timed> {
  const timeFile = path.join(work, `time-${randomBytes(4).toString('hex')}`);
  const stdin = io.stdin === undefined ? 'ignore' : openSync(io.stdin, 'r');
  const stdout = io.stdout === undefined ? 'ignore' : openSync(io.stdout, 'w');
  const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', '-o', timeFile, process.execPath, CLI, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: [stdin, stdout, 'pipe'],
  });
  if (typeof stdin === 'number') closeSync(stdin);
  if (typeof stdout === 'number') closeSync(stdout);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const [seconds = '0', user = '0', system = '0', kib = '0'] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)?.split(' ') ?? [];
      rmSync(timeFile, { force: true });
      resolve({ seconds: Number(seconds), cpuSeconds: Number(user) + Number(system), peakRssMiB: Number(kib) / 1024, code, stderr });
    }),
  );
}

const timing = (run: Timed) => `${f2(run.seconds)} s (CPU ${f2(run.cpuSeconds)} s), peak RSS ${f1(run.peakRssMiB)} MiB`;

async function admin<T>(sql: string, url: string = SERVER): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Creates with the command's backups running one after another beside the service, for the whole load. */
async function createsWithCommandBackups(template: string): Promise<Figures & { backups: number }> {
  const url = freshStore('backup-beside', template);
  const dir = path.join(work, 'backups-beside');
  mkdirSync(dir, { recursive: true });
  const server = await start('service', url);
  let running = true;
  let backups = 0;
  const loop = (async () => {
    while (running) {
      const target = path.join(dir, `b-${backups}.db`);
      const run = await timedCli(['backup', '--to', target], { DATABASE_URL: url });
      if (run.code !== 0) throw new Error(`backup failed during the load: ${run.stderr}`);
      backups += 1;
      rmSync(target, { force: true });
      rmSync(`${target}.meta.json`, { force: true });
    }
  })();
  try {
    return { ...(await measureRunning(server)), backups };
  } finally {
    running = false;
    await loop;
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates while the service's own backups run back to back (BACKUP_INTERVAL=1s, BACKUP_KEEP=1). */
async function createsWithScheduledBackups(template: string): Promise<Figures & { backups: number }> {
  const dir = path.join(work, 'backups-scheduled');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const server = await start('service', freshStore('backup-scheduled', template), { BACKUP_DIR: dir, BACKUP_INTERVAL: '1s', BACKUP_KEEP: '1' });
  try {
    const figures = await measureRunning(server);
    const backups = readFileSync(server.logFile, 'utf8').split('\n').filter((line) => line.includes('"msg":"backup written"')).length;
    return { ...figures, backups };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function createsQuiet(template: string): Promise<Figures> {
  const server = await start('service', freshStore('backup-quiet', template));
  try {
    return await measureRunning(server);
  } finally {
    await server.stop();
  }
}

export async function backupSection(): Promise<SectionResult> {
  const template = await storeOfPlants();
  const store = freshStore('backup-source', template);
  const backupFile = path.join(work, 'timed-backup.db');
  rmSync(backupFile, { force: true });
  rmSync(`${backupFile}.meta.json`, { force: true });

  const backup = await timedCli(['backup', '--to', backupFile], { DATABASE_URL: store });
  const exportFile = path.join(work, 'plants.ndjson');
  const exported = await timedCli(['export'], { DATABASE_URL: store }, { stdout: exportFile });
  const name = `plants_bench_${randomBytes(5).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  let imported: Timed;
  let importedRows: number;
  try {
    imported = await timedCli(['import'], { DATABASE_URL: url.toString() }, { stdin: exportFile });
    importedRows = Number((await admin<{ n: string }>('SELECT count(*) AS n FROM plants', url.toString()))[0]?.n ?? 0);
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  const exportedLines = readFileSync(exportFile, 'utf8').split('\n').length - 1;
  for (const [label, run] of [['backup', backup], ['export', exported], ['import', imported]] as const) {
    if (run.code !== 0) throw new Error(`plant-store ${label} failed: ${run.stderr}`);
    console.error(`${label}: ${f2(run.seconds)} s (CPU ${f2(run.cpuSeconds)} s), peak RSS ${f1(run.peakRssMiB)} MiB`);
  }
  rmSync(exportFile, { force: true });
  for (const file of readdirSync(work).filter((entry) => entry.startsWith('timed-backup'))) rmSync(path.join(work, file), { force: true });

  const { medians, runs } = await alternate({
    quiet: () => createsQuiet(template),
    beside: () => createsWithCommandBackups(template),
    scheduled: () => createsWithScheduledBackups(template),
  });
  const backupsOf = (list: Figures[]) => list.map((run) => (run as Figures & { backups: number }).backups).join(', ');
  const plants = STORED.toLocaleString('en');
  const lines = [
    `### Backups, export and import: a store of ${plants} plants`,
    '',
    `Creates: ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up, medians of ${ROUNDS} alternating rounds; backups run back to back`,
    'for the whole load (command: `plant-store backup` in a loop beside the service; scheduled: BACKUP_INTERVAL=1s in the service).',
    '',
    ...TABLE_HEAD,
    row('creates, no backup', medians.quiet),
    row(`creates, command backups beside (${backupsOf(runs.beside)} backups completed per round)`, medians.beside),
    row(`creates, scheduled backups (${backupsOf(runs.scheduled)} backups completed per round)`, medians.scheduled),
    '',
    '| measure | value | goal |',
    '|---|---:|---|',
    `| \`plant-store backup\`, ${plants} plants | ${timing(backup)} | < 10 s |`,
    `| creates during command backups / without | ${throughputRatio(runs.beside, runs.quiet)} | ≥ 0.70 |`,
    `| creates during scheduled backups / without | ${throughputRatio(runs.scheduled, runs.quiet)} | ≥ 0.70 |`,
    `| \`plant-store export\` (${exportedLines.toLocaleString('en')} lines) | ${timing(exported)} | < 15 s, < 200 MiB |`,
    `| \`plant-store import\` into PostgreSQL (${importedRows.toLocaleString('en')} rows) | ${timing(imported)} | < 60 s, < 200 MiB |`,
    '',
  ];
  return { lines, failed: failures(...runs.quiet, ...runs.beside, ...runs.scheduled) };
}
