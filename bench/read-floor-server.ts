// Read floor: the read ceiling (bench/read-ceiling-server.ts) answering from the service's SQLite file with the
// service's own SELECTs (plants as JSON text written by SQLite, from the service's own plantJsonSqlite; by the key
// (tenant, id) in the shared tenant '', as the service reads with tenants off; one row more than the page to know
// whether another follows), and nothing else: no logs, no request ids, no parameter parsing beyond BigInt/Number.
// What a read costs in the store alone; the service's reads are measured against it in the same run.
// With CEILING_LOG=1 it is the read floor+log: the floor plus the service's request log line (bench/ceiling-log.ts).
import path from 'node:path';
import Database from 'better-sqlite3';
import { ceilingApp, listen } from './ceiling-app';
import { requestLogLine } from './ceiling-log';

// Taken from the service's build, as ceiling-app takes its request classes: the floor writes the service's bytes.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { plantJsonSqlite } = require('../dist/plants/plant.json') as { plantJsonSqlite: () => string };

const db = new Database(path.resolve((process.env.DATABASE_URL ?? 'file:./data/plants.db').slice('file:'.length)));
db.pragma('journal_mode = WAL');
db.defaultSafeIntegers(true);
const PLANT_JSON = plantJsonSqlite();
const SHARED_TENANT = '';
const byId = db.prepare<[string, bigint], { json: string; version: bigint }>(`SELECT ${PLANT_JSON} AS json, version FROM plants WHERE tenant = ? AND id = ?`);
const after = db.prepare<[string, bigint, number], string>(`SELECT ${PLANT_JSON} FROM plants WHERE tenant = ? AND id > ? ORDER BY id LIMIT ?`).pluck();
const ID_START = '{"id":'.length;

const app = ceilingApp(process.env.CEILING_LOG === '1' ? requestLogLine() : undefined);
app.get('/plants/:id', (req, res) => {
  const json = byId.get(SHARED_TENANT, BigInt(req.params.id))?.json;
  if (json === undefined) res.status(404).json({ error: 40401, message: 'not found' });
  else res.set('Cache-Control', 'no-store').type('application/json').send(json);
});
app.get('/plants', (req, res) => {
  const limit = Number(req.query.limit ?? 100);
  const plants = after.all(SHARED_TENANT, BigInt(typeof req.query.after === 'string' ? req.query.after : 0), limit + 1);
  if (plants.length > limit) {
    plants.length = limit;
    const last = plants[limit - 1] as string;
    res.set('Link', `</plants?limit=${limit}&after=${last.slice(ID_START, last.indexOf(',', ID_START))}>; rel="next"`);
  }
  res.set('Cache-Control', 'no-store').type('application/json').send(`[${plants.join(',')}]`);
});

listen(app, () => db.close());
