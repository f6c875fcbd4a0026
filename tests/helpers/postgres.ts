import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server TEST_DATABASE_URL names, or undefined on a machine without one. */
export const adminUrl = (): string | undefined => process.env.TEST_DATABASE_URL || undefined;

export function databaseUrl(server: string, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

export type TestDatabase = { name: string; url: string; drop: () => Promise<void> };

/** A fresh database with a random name on the test server, so files and parallel runs never share one. */
export async function createTestDatabase(server: string): Promise<TestDatabase> {
  const name = `plants_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrl(server, name),
    drop: async () => {
      const dropper = new pg.Client({ connectionString: server });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * One query on a connection of its own (psql), answered synchronously as JSON: what is really committed, read the
 * way the SQLite helpers read the file, so the same assertions run against both stores.
 */
export function queryJson<T>(url: string, sql: string): T {
  const out = execFileSync('psql', [url, '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8' });
  return JSON.parse(out) as T;
}

/** The plants table through psql, ids as bigint. */
export function plantRows(url: string, where = 'TRUE'): { id: bigint; name: string; tag: string | null }[] {
  const rows = queryJson<{ id: string; name: string; tag: string | null }[]>(
    url,
    `SELECT coalesce(json_agg(json_build_object('id', id::text, 'name', name, 'tag', tag) ORDER BY id), '[]') FROM plants WHERE ${where}`,
  );
  return rows.map((row) => ({ id: BigInt(row.id), name: row.name, tag: row.tag }));
}

export type OutboxRow = {
  event_id: string;
  subscriber: string;
  plant_id: bigint;
  payload: string;
  status: string;
  attempts: bigint;
  last_error: string | null;
  trace_context: string | null;
};

/** The webhook outbox through psql in write order, ids and attempts as bigint (as the SQLite file reads them). */
export function outboxRows(url: string, where = 'TRUE'): OutboxRow[] {
  const rows = queryJson<(Omit<OutboxRow, 'plant_id' | 'attempts'> & { plant_id: string; attempts: number })[]>(
    url,
    `SELECT coalesce(json_agg(json_build_object('event_id', event_id, 'subscriber', subscriber, 'plant_id', plant_id::text,
       'payload', payload, 'status', status, 'attempts', attempts, 'last_error', last_error, 'trace_context', trace_context) ORDER BY seq), '[]')
     FROM webhook_outbox WHERE ${where}`,
  );
  return rows.map((row) => ({ ...row, plant_id: BigInt(row.plant_id), attempts: BigInt(row.attempts) }));
}

/** One statement on a connection of its own (psql), e.g. a table dropped under the running app. */
export function runSql(url: string, sql: string): void {
  execFileSync('psql', [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8' });
}
