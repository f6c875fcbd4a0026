// Ceiling F: ceiling C plus the same durable store the service has (a SQLite file in WAL mode with
// synchronous=FULL, creates of one event-loop turn group-committed in one transaction and fsync, each answered
// after its commit), and no logs. The service with everything on is measured against it in the same run.
// With CEILING_LOG=1 it is ceiling F+log: F plus the service's request log line (bench/ceiling-log.ts).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { z } from 'zod';
import { ceilingApp, listen } from './ceiling-app';
import { requestLogLine } from './ceiling-log';

const newPlant = z.object({ id: z.number().int(), name: z.string().min(1).max(200), tag: z.string().min(1).max(100).optional() });
type NewPlant = z.infer<typeof newPlant>;
type Stored = { name: string; tag: string | null };

const file = path.resolve((process.env.DATABASE_URL ?? 'file:./data/ceiling-f.db').slice('file:'.length));
mkdirSync(path.dirname(file), { recursive: true });
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
const migrations = path.resolve(__dirname, '..', 'migrations', 'sqlite');
const hasPlants = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'plants'").get() !== undefined;
if (!hasPlants) for (const name of readdirSync(migrations).filter((f) => f.endsWith('.sql')).sort()) db.exec(readFileSync(path.join(migrations, name), 'utf8'));

// The shared tenant (''), the one the service writes with tenants off: plants' key is (tenant, id) since
// migrations/sqlite/012, so the insert and the read each descend the table's own b-tree as the service's do.
const insert = db.prepare("INSERT INTO plants (tenant, id, name, tag) VALUES ('', ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING");
const select = db.prepare<[number], Stored>("SELECT name, tag FROM plants WHERE tenant = '' AND id = ?");
type Pending = { plant: NewPlant; resolve: (stored: Stored) => void; reject: (error: unknown) => void };
const commit = db.transaction((batch: Pending[]) =>
  batch.map(({ plant }) =>
    insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1 ? { name: plant.name, tag: plant.tag ?? null } : (select.get(plant.id) as Stored),
  ),
);
let pending: Pending[] = [];
const flush = () => {
  const batch = pending;
  pending = [];
  try {
    const stored = commit.immediate(batch);
    batch.forEach(({ resolve }, index) => resolve(stored[index] as Stored));
  } catch (error) {
    for (const { reject } of batch) reject(error);
  }
};
const insertOrGet = (plant: NewPlant) =>
  new Promise<Stored>((resolve, reject) => {
    if (pending.push({ plant, resolve, reject }) === 1) setImmediate(flush);
  });

const app = ceilingApp(process.env.CEILING_LOG === '1' ? requestLogLine() : undefined);
app.use(express.json({ limit: '16kb' }));
app.post('/plants', async (req, res) => {
  const parsed = newPlant.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: 40006, message: parsed.error.message });
    return;
  }
  const stored = await insertOrGet(parsed.data);
  res.json(stored.tag === null ? { name: stored.name } : { name: stored.name, tag: stored.tag });
});

listen(app, () => db.close());
