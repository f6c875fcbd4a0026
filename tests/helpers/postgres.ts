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
