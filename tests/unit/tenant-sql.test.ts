import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { listStatement } from '../../src/plants/plant.list.postgres';
import type { PlantListQuery } from '../../src/plants/plant.list-query';
import { SORTS } from '../../src/plants/plant.schemas';
import type { TenantKey } from '../../src/tenant';
import { ALLOWED, tenantProblems } from '../helpers/tenant-sql';

// Statements as the stores write them, carrying the tenant (docs/decisions/tests.md, Tenants), each clean.
const LIST = 'SELECT id, name, tag FROM plants WHERE tenant = $1 AND tag = $2 AND (name_key, name COLLATE "C", id) > ($3, $4, $5) ORDER BY name_key, name COLLATE "C", id LIMIT $6';
const COUNTED =
  'WITH page AS (SELECT id, name FROM plants WHERE tenant = $1 AND tag = $2 ORDER BY tag, id LIMIT $3) ' +
  'SELECT (SELECT last_pos FROM plant_event_counter) AS position, (SELECT count(*) FROM plants WHERE tenant = $1 AND tag = $2) AS total, page.* ' +
  'FROM (VALUES (1)) AS one (n) LEFT JOIN page ON true ORDER BY page.id';
const EVENT_INSERT = 'INSERT INTO plant_events (tenant, pos, kind, plant_id, name, tag, at) VALUES (?, ?, ?, ?, ?, ?, ?)';
const FUNCTION = `CREATE FUNCTION plants_write(removed_tenants TEXT[], removed_ids BIGINT[]) RETURNS BIGINT
LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(removed_ids) > 0 THEN
    DELETE FROM plants p USING unnest(removed_tenants, removed_ids) AS r(tenant, id) WHERE p.tenant = r.tenant AND p.id = r.id;
  END IF;
  RETURN 1;
END $$`;
const KEY_FIND = 'SELECT fingerprint, status FROM idempotency_keys WHERE tenant = ? AND caller = ? AND key = ? AND expires_at > ?';

describe('tenantProblems: statements that carry the tenant', () => {
  it.each([
    ['a list page with a keyset row comparison', LIST],
    ['a page and its count subquery', COUNTED],
    ['an events INSERT naming the column', EVENT_INSERT],
    ['a DELETE inside a function body', FUNCTION],
    ['a key find', KEY_FIND],
    ['a read joined on tenant', 'SELECT r.id, p.version FROM unnest($1::text[], $2::bigint[]) AS r(tenant, id) LEFT JOIN LATERAL (SELECT version FROM plants p WHERE p.tenant = r.tenant AND p.id = r.id) x ON true'],
    ['tenant = ANY', 'UPDATE plants SET name_key = ? WHERE tenant = ANY($1) AND id = ?'],
    ['a (tenant, id) row comparison', 'SELECT id FROM plants WHERE (tenant, id) IN (SELECT t, i FROM unnest($1::text[], $2::bigint[]) AS u(t, i))'],
    ['a join USING tenant', 'SELECT e.pos FROM plant_events e JOIN plants USING (tenant, id) WHERE e.tenant = $1'],
    ['the shared tenant named as a literal', "DELETE FROM plants WHERE tenant = '' AND id = ANY($1)"],
    ['an aliased INSERT with ON CONFLICT', 'INSERT INTO idempotency_keys AS i (tenant, caller, key) VALUES ($1, $2, $3) ON CONFLICT (caller, key) DO UPDATE SET key = excluded.key WHERE i.expires_at <= now()'],
    ['DDL', 'CREATE TABLE plants_new AS SELECT * FROM plants; ALTER TABLE plant_events ADD COLUMN tenant TEXT; CREATE INDEX x ON plants (tenant, tag)'],
    ['a statement a test marks', '/* unchecked: test */ SELECT id FROM plants'],
    ['a global statement with its reason', 'DELETE FROM plant_events WHERE pos IN (SELECT pos FROM plant_events ORDER BY pos LIMIT ?) AND at < ?'],
    ['a global statement that routes and selects tenant', 'SELECT pos, tenant, kind FROM plant_events WHERE pos > $1 ORDER BY pos LIMIT $2'],
    ['a routed claim returning the tenant, over several lines', "UPDATE webhook_outbox SET next_attempt_at = $3\n  WHERE seq IN (\n    SELECT seq FROM webhook_outbox\n    WHERE subscriber = $1 AND status = 'pending' AND next_attempt_at <= $2\n    LIMIT $4 FOR UPDATE SKIP LOCKED)\n  RETURNING seq, tenant"],
  ])('%s passes', (_what, sql) => {
    expect(tenantProblems(sql)).toEqual([]);
  });
});

describe('tenantProblems: planted mistakes', () => {
  it.each([
    ['a list page without its tenant = $1 AND', LIST.replace('tenant = $1 AND ', '')],
    ['a count subquery without it', COUNTED.replace('plants WHERE tenant = $1 AND tag = $2) AS total', 'plants WHERE tag = $2) AS total')],
    ['a page CTE without it (the count keeps it)', COUNTED.replace('plants WHERE tenant = $1 AND tag = $2 ORDER', 'plants WHERE tag = $2 ORDER')],
    ['an events INSERT without the column', EVENT_INSERT.replace('tenant, ', '').replace('?, ', '')],
    ['an INSERT without a column list', 'INSERT INTO plants VALUES (?, ?, ?)'],
    ['DELETE FROM plants WHERE id = ANY($1) in a function body', FUNCTION.replace(/DELETE FROM plants p USING .*;/, 'DELETE FROM plants WHERE id = ANY($1);')],
    ['a key find without tenant', KEY_FIND.replace('tenant = ? AND ', '')],
    ['a join on id only', 'SELECT p.id FROM (SELECT id AS match_id FROM plants WHERE tenant = ? AND instr(name_key, ?) > 0 LIMIT ?) JOIN plants p ON p.id = match_id'],
    ['the condition only in a comment', 'SELECT id FROM plants WHERE id = ? -- AND tenant = ?'],
    ['the condition only in a string', "SELECT 'tenant = 1' FROM plants WHERE id = ?"],
    ['an assignment, not a condition', 'UPDATE plants SET tenant = ? WHERE id = ?'],
    ['another alias confined, not this one', 'SELECT p.id FROM plants p JOIN plant_events e ON e.plant_id = p.id WHERE e.tenant = ?'],
    ['one UNION branch without it', 'SELECT id FROM plants WHERE tenant = ? UNION ALL SELECT id FROM plants WHERE id = ?'],
    ['a comma-joined table', 'SELECT w.id FROM unnest($1::bigint[]) AS w(id), plants p WHERE p.id = w.id'],
    ['a condition not equal to the tenant', 'SELECT id FROM plants WHERE tenant <> ? AND id = ?'],
    ['a routed global read that does not select tenant', 'SELECT pos, kind FROM plant_events WHERE pos > ? ORDER BY pos LIMIT ?'],
    ['a routed global read that names a constant tenant', "SELECT pos, kind, '' AS tenant FROM plant_events WHERE pos > ? ORDER BY pos LIMIT ?"],
    ['a routed claim that returns a constant tenant', "UPDATE webhook_outbox SET next_attempt_at = $3 WHERE seq IN (SELECT seq FROM webhook_outbox WHERE subscriber = $1 AND status = 'pending' AND next_attempt_at <= $2 LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING seq, ''::text AS tenant"],
  ])('%s is caught', (_what, sql) => {
    expect(tenantProblems(sql)).not.toEqual([]);
  });

  it('names the table and alias of each reference that lacks it, and only those', () => {
    const problems = tenantProblems('SELECT p.id FROM plants p JOIN plant_events e ON e.tenant = p.tenant WHERE p.id = ? AND (SELECT count(*) FROM webhook_outbox) > 0');

    expect(problems).toEqual([expect.stringMatching(/^webhook_outbox read or written without a tenant condition/)]);
  });
});

describe('ALLOWED', () => {
  it('gives every global statement a name and a one-line reason', () => {
    for (const allowed of ALLOWED) expect(allowed.reason).toMatch(/^[^\n]{10,}$/);
    expect(new Set(ALLOWED.map(({ name }) => name)).size).toBe(ALLOWED.length);
  });
});

const listOf = (query: PlantListQuery) => listStatement('alice' as TenantKey, query);

function everyListShape(): PlantListQuery[] {
  const shapes: PlantListQuery[] = [];
  for (const sort of SORTS) {
    const from = sort === 'name' || sort === '-name' ? (['k', 'K', 1n] as const) : (['2026-01-01T00:00:00.000Z', 1n] as const);
    for (const tag of [undefined, 'fern'])
      for (const search of [undefined, 'ab', 'abc'])
        for (const start of [false, true])
          for (const count of [false, true]) {
            const query: PlantListQuery = { limit: 10, sort, count, ...(tag === undefined ? {} : { tag }), ...(search === undefined ? {} : { search }) };
            if (start && (sort === 'id' || sort === '-id')) query.after = 5n;
            else if (start) query.from = from;
            shapes.push(query);
          }
  }
  return shapes;
}

describe('the PostgreSQL list statements (every sort × tag × q × start × count)', () => {
  const shapes = everyListShape();

  it('carry the tenant', () => {
    const dirty = shapes.filter((query) => tenantProblems(listOf(query).text).length > 0).map((query) => listOf(query).name);

    expect(dirty).toEqual([]);
  });

  it('each one, its first tenant condition removed, is caught', () => {
    // The first `tenant = $1 AND `, or a `WHERE tenant = $1` that stands alone.
    const withoutTenant = (text: string) =>
      /\btenant = \$1 AND /.test(text) ? text.replace(/\b(\w+\.)?tenant = \$1 AND /, '') : text.replace(/ WHERE (\w+\.)?tenant = \$1(?= ORDER| LIMIT|\)|$)/, '');
    const missed = shapes.map((query) => listOf(query)).filter(({ text }) => tenantProblems(withoutTenant(text)).length === 0);

    expect(missed.map(({ name }) => name)).toEqual([]);
  });
});

const MIGRATIONS = path.join(__dirname, '../../migrations/postgres');

describe("the newest plants_write of migrations/postgres (the write's function body)", () => {
  const files = readdirSync(MIGRATIONS).filter((file) => /CREATE (OR REPLACE )?FUNCTION plants_write\b/.test(readFileSync(path.join(MIGRATIONS, file), 'utf8')));
  const newest = files.sort().at(-1) as string;
  const sql = readFileSync(path.join(MIGRATIONS, newest), 'utf8');
  const functions = sql.split(/(?=CREATE (?:OR REPLACE )?FUNCTION )/).filter((part) => /^CREATE (OR REPLACE )?FUNCTION plants_write\b/.test(part));

  it(`${newest}: every overload carries the tenant`, () => {
    const problems = functions.flatMap((part) => tenantProblems(part));

    expect(problems).toEqual([]);
  });
});

// Every src file with SQL on a tenant table, and why: a new one fails here until it is read and listed.
const INVENTORY: Record<string, string> = {
  'src/backup/store-file.ts': "a backup's sidecar counts every plant (global)",
  'src/plants/plant.events.sqlite.ts': 'event log: insert carries the tenant; reads after a position, bounds and pruning are global',
  'src/plants/plant.idempotency-keys.postgres.ts': 'keys: find, save, claim and answer per (tenant, caller, key); pruning by expiry global',
  'src/plants/plant.idempotency-keys.ts': 'keys on SQLite: find, save and keep per (tenant, caller, key); pruning by expiry global',
  'src/plants/plant.list.postgres.ts': 'list pages and counts inside one tenant',
  'src/plants/plant.list.sqlite.ts': 'list pages and counts inside one tenant',
  'src/plants/plant.repository.postgres.ts': 'by id inside a tenant; events after a position, bounds and pruning global',
  'src/plants/plant.repository.sqlite.ts': 'by id inside a tenant',
  'src/plants/plant.search-keys.ts': 'search-key backfill: a global scan selecting tenant, the fill by (tenant, id)',
  'src/plants/plant.transfer.postgres.ts': 'export and import of every tenant, each line with its tenant',
  'src/plants/plant.transfer.sqlite.ts': 'export and import of every tenant, each line with its tenant',
  'src/plants/plant.write.postgres.ts': 'the write: read by (tenant, id), plants_write with tenant arrays, the outbox with the tenant',
  'src/plants/plant.write.sqlite.ts': 'the write: select, insert, update, delete by (tenant, id)',
  'src/plants/plant.write-outbox.postgres.ts': "the write's outbox rows on PostgreSQL, inserted with their tenant",
  'src/store/store.sqlite.ts': "the start's check for plants of the shared tenant (tenant = '')",
  'src/webhooks/outbox.postgres.ts': 'the outbox: dispatch by subscriber and seq (global, returns tenant)',
  'src/webhooks/outbox.sqlite.ts': 'the outbox: insert carries the tenant; dispatch by subscriber and seq (global, selects tenant)',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(file) : file.endsWith('.ts') ? [file] : [];
  });
}

describe('the inventory of SQL on tenant tables', () => {
  it('lists, with a reason, every src file whose text reads or writes one (FROM|JOIN|INTO|UPDATE <table>)', () => {
    const root = path.join(__dirname, '../..');
    const reference = /\b(FROM|JOIN|INTO|UPDATE)\s+(plants|plant_events|idempotency_keys|webhook_outbox)\b/;
    const touching = sourceFiles(path.join(root, 'src'))
      .filter((file) => reference.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(root, file).split(path.sep).join('/'));

    expect(touching.filter((file) => INVENTORY[file] === undefined)).toEqual([]);
  });
});
