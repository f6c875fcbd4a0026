import { SHARED_TENANT } from '../../src/tenant';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { parseJson } from '../../src/http/parse-json';
import { deletedPlantJson, newPlantJson, plantBodyJson, plantJson, plantLine, plantsJson, type PlantFields } from '../../src/plants/plant.json';
import { newPlantSchema, plantSchema, storedPlantSchema, type NewPlant } from '../../src/plants/plant.schemas';
import { RESOURCES } from '../../src/resources';
import { createStore } from '../../src/store';
import type { PostgresStore } from '../../src/store/store.postgres';
import { sqliteParts } from '../../src/store/store.sqlite';
import { plantRepository } from '../helpers/store-parts';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, outboxRows, type TestDatabase } from '../helpers/postgres';
import { captureLogs } from '../helpers/common';

// The one JSON writer of a plant (src/plants/plant.json.ts), held to the schemas the API document publishes and,
// byte for byte, to the rendering a database writes (SQLite's reads) and to the webhook bodies PostgreSQL keeps.

type Property = { type?: string; format?: string };
type ObjectSchema = { properties: Record<string, Property>; required?: string[] };

/** The members of a published schema, as the API document states them: every property and which are required. */
function membersOf(schema: z.ZodType): ObjectSchema {
  // As clients send NewPlant (its id's parse is a transform the document states by hand, src/plants/index.ts).
  const document = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { $defs?: Record<string, ObjectSchema> } & ObjectSchema;
  const defs = Object.values(document.$defs ?? {});
  return defs.length === 1 ? (defs[0] as ObjectSchema) : document;
}

// A value of each JSON Schema type a plant's member may have; an int64 is given past 2^53, where a double would round.
function sampleValue(member: string, property: Property): unknown {
  if (member === 'id' || property.format === 'int64') return 9007199254740993n;
  if (property.type === 'integer') return 7;
  if (property.type === 'string' && property.format === 'date-time') return '2026-11-27T09:41:07.250Z';
  if (property.type === 'string') return `${member} "quoted" \\ é 🌱`;
  if (property.type === 'number') return 1.5;
  if (property.type === 'boolean') return true;
  throw new Error(`no sample value for ${member} (${JSON.stringify(property)}): add one here`);
}

/** Every member the schema has (`all`) and only the required ones (`required`), each with a sample value. */
function samplesOf(schema: z.ZodType): { all: Record<string, unknown>; required: Record<string, unknown> } {
  const { properties, required = [] } = membersOf(schema);
  const all = Object.fromEntries(Object.entries(properties).map(([member, property]) => [member, sampleValue(member, property)]));
  return { all, required: Object.fromEntries(Object.entries(all).filter(([member]) => required.includes(member))) };
}

describe('the plant JSON writer against the schemas', () => {
  it.each([
    ['plantJson', 'StoredPlant', storedPlantSchema, (plant: Record<string, unknown>) => plantJson(plant as PlantFields)],
    ['plantBodyJson', 'Plant', plantSchema, (plant: Record<string, unknown>) => plantBodyJson(plant as PlantFields)],
    ['newPlantJson', 'NewPlant', newPlantSchema, (plant: Record<string, unknown>) => newPlantJson(plant as PlantFields)],
  ])('when %s writes a %s with every member and with only the required ones, then it writes exactly those members', (_writer, _schema, schema, write) => {
    const { all, required } = samplesOf(schema);

    expect({ all: parseJson(write(all)), required: parseJson(write(required)) }).toEqual({ all, required });
  });

  it('when a NewPlant is written (the plant.created body), then its members are the StoredPlant ones a client writes, in their order', () => {
    const stored = Object.keys(membersOf(storedPlantSchema).properties);

    expect(stored.slice(0, Object.keys(newPlantSchema.shape).length)).toEqual(Object.keys(newPlantSchema.shape));
  });

  it('when a deleted plant, a list or an export line is written, then each is the StoredPlant form around the same members', () => {
    const { all, required } = samplesOf(storedPlantSchema);
    const plants = [all, required] as PlantFields[];

    expect({ deleted: deletedPlantJson(-9223372036854775808n), list: parseJson(plantsJson(plants)), line: plantLine(plants[0] as PlantFields) }).toEqual({
      deleted: '{"id":-9223372036854775808}',
      list: [all, required],
      line: `${plantJson(plants[0] as PlantFields)}\n`,
    });
  });
});

// Members a client writes beyond id, name and tag, each with its sample value, go into every plant below: one
// the stores do not keep (a forgotten migration) or a database does not render fails the comparisons. The times
// are the store's: each comparison is with the plant as the store answered it.
const EXTRA = Object.fromEntries(Object.entries(samplesOf(newPlantSchema).all).filter(([member]) => !['id', 'name', 'tag'].includes(member)));
const LONG = '🌱'.repeat(200);
// The int64 edges, and the strings a name or tag may hold (control characters are refused by the schema).
const PLANTS: NewPlant[] = (<PlantFields[]>[
  { id: -9223372036854775808n, name: 'the smallest id', tag: 'edge' },
  { id: 9223372036854775807n, name: 'the largest id' },
  { id: 0n, name: 'zero 🌵', tag: '🌿' },
  { id: 9007199254740993n, name: '2^53 + 1: "quoted" and \\back\\slashed\\' },
  { id: 11n, name: 'line\u2028paragraph\u2029next\u0085line', tag: '\u2028' },
  { id: 12n, name: 'non-BMP 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𓂀 and a pair written as escapes \uD83D\uDE00', tag: '𝔱𝔞𝔤' },
  { id: 13n, name: 'combining e\u0301 n\u0303 a\u030A\u0301 and ZWJ 👩\u200D🔬', tag: 'zero\u200Bwidth' },
  { id: 14n, name: '</script><script>alert(1)</script> & <!-- -->', tag: "'single' & \"double\"" },
  { id: 15n, name: LONG, tag: '🌱'.repeat(100) },
  { id: 16n, name: ' \u00A0 spaces\u3000around\uFEFF ', tag: '\\u2028 written as text' },
]).map((plant) => ({ ...EXTRA, ...plant }) as NewPlant);
const byId = (plants: readonly PlantFields[]) => [...plants].sort((a, b) => (a.id < b.id ? -1 : 1));

describe('SQLite reads (json_object) against the writer', () => {
  let dir: string;
  let close: () => void;
  let plants: ReturnType<typeof plantRepository>;
  let stored: PlantFields[];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plant-json-'));
    const file = path.join(dir, 'plants.db');
    const db = openDatabase(file, { busyTimeoutMs: 1000 });
    const migrations = loadMigrations();
    migrate(db, migrations);
    const config = loadConfig({ DATABASE_URL: `file:${file}`, AUTH_TOKENS: 'x'.repeat(32) });
    plants = plantRepository(sqliteParts(db, migrations, config, captureLogs().logger, RESOURCES));
    close = () => db.close();
    stored = (await Promise.all(PLANTS.map((plant) => plants.create(SHARED_TENANT, plant)))).map((outcome) => outcome.stored);
  });
  afterAll(() => {
    close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when each plant is read by id, then its text is the writer\'s, byte for byte', async () => {
    const read = await Promise.all(PLANTS.map(async (plant) => (await plants.findById(SHARED_TENANT, plant.id))?.json));

    expect(read).toEqual(stored.map((plant) => plantJson(plant)));
  });

  it('when the plants are listed, then the page is the writer\'s list, byte for byte', async () => {
    const page = await plants.list(SHARED_TENANT, { limit: 1000 });

    expect(page).toEqual({ json: plantsJson(byId(stored)), position: expect.any(BigInt) as unknown });
  });
});

describeWith('postgres', 'PostgreSQL webhook bodies (as stored) against the writer', (server) => {
  let database: TestDatabase;
  let store: PostgresStore;

  beforeAll(async () => {
    database = await createTestDatabase(server);
    const env = {
      DATABASE_URL: database.url,
      AUTH_TOKENS: 'x'.repeat(32),
      WEBHOOK_URLS: 'http://127.0.0.1:9/never-called',
      WEBHOOK_SECRET: `whsec_${Buffer.from('k'.repeat(32)).toString('base64')}`,
      WEBHOOK_EVENTS: 'plant.created,plant.updated,plant.deleted',
    };
    // The dispatcher is never started: the outbox keeps every body as the statement wrote it.
    store = createStore(loadConfig(env), captureLogs().logger, RESOURCES) as PostgresStore;
    await store.open();
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('when each plant is created, edited to its odd name and deleted, then every outbox body is the writer\'s, byte for byte', async () => {
    await Promise.all(PLANTS.map((plant) => plantRepository(store).create(SHARED_TENANT, { ...plant, name: 'before', tag: 'before' })));
    const edited = await Promise.all(PLANTS.map(({ id, ...members }) => plantRepository(store).update(SHARED_TENANT, id, { ...members, tag: members.tag ?? null })));
    const after = edited.map((outcome) => ('stored' in outcome ? outcome.stored : undefined)) as PlantFields[];
    const read = await Promise.all(PLANTS.map(async (plant) => (await plantRepository(store).findById(SHARED_TENANT, plant.id))?.json));
    const listed = await plantRepository(store).list(SHARED_TENANT, { limit: 1000 });
    await Promise.all(PLANTS.map((plant) => plantRepository(store).delete(SHARED_TENANT, plant.id)));

    const bodies = outboxRows(database.url).map((row) => row.payload);

    expect(edited.map((outcome) => outcome.outcome)).toEqual(PLANTS.map(() => 'updated'));
    expect({ read, listed }).toEqual({ read: after.map((plant) => plantJson(plant)), listed: { json: plantsJson(byId(after)), position: expect.any(BigInt) as unknown } });
    expect(bodies).toEqual([
      ...PLANTS.map((plant) => newPlantJson({ ...plant, name: 'before', tag: 'before' })),
      ...after.map((plant) => `{"type":"plant.updated","data":${plantJson(plant)}}`),
      ...PLANTS.map((plant) => `{"type":"plant.deleted","data":${deletedPlantJson(plant.id)}}`),
    ]);
  });
});
