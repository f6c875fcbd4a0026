// Read floor: the read ceiling (bench/read-ceiling-server.ts) answering from the service's SQLite file with the
// service's own SELECTs (plants as JSON text written by SQLite, one row more than the page to know whether
// another follows), and nothing else: no logs, no request ids, no parameter parsing beyond BigInt/Number.
// What a read costs in the store alone; the service's reads are measured against it in the same run.
// With CEILING_LOG=1 it is the read floor+log: the floor plus the service's request log line (bench/ceiling-log.ts).
import path from 'node:path';
import Database from 'better-sqlite3';
import { ceilingApp, listen } from './ceiling-app';
import { requestLogLine } from './ceiling-log';

const db = new Database(path.resolve((process.env.DATABASE_URL ?? 'file:./data/plants.db').slice('file:'.length)));
db.pragma('journal_mode = WAL');
db.defaultSafeIntegers(true);
const PLANT_JSON = "CASE WHEN tag IS NULL THEN json_object('id', id, 'name', name) ELSE json_object('id', id, 'name', name, 'tag', tag) END";
const byId = db.prepare<[bigint], string>(`SELECT ${PLANT_JSON} FROM plants WHERE id = ?`).pluck();
const after = db.prepare<[bigint, number], string>(`SELECT ${PLANT_JSON} FROM plants WHERE id > ? ORDER BY id LIMIT ?`).pluck();
const ID_START = '{"id":'.length;

const app = ceilingApp(process.env.CEILING_LOG === '1' ? requestLogLine() : undefined);
app.get('/plants/:id', (req, res) => {
  const json = byId.get(BigInt(req.params.id));
  if (json === undefined) res.status(404).json({ error: 40401, message: 'not found' });
  else res.set('Cache-Control', 'no-store').type('application/json').send(json);
});
app.get('/plants', (req, res) => {
  const limit = Number(req.query.limit ?? 100);
  const plants = after.all(BigInt(typeof req.query.after === 'string' ? req.query.after : 0), limit + 1);
  if (plants.length > limit) {
    plants.length = limit;
    const last = plants[limit - 1] as string;
    res.set('Link', `</plants?limit=${limit}&after=${last.slice(ID_START, last.indexOf(',', ID_START))}>; rel="next"`);
  }
  res.set('Cache-Control', 'no-store').type('application/json').send(`[${plants.join(',')}]`);
});

listen(app, () => db.close());
