import { runSql } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { bearer, defaultStore, postPlant, startTestApp, type TestApp } from '../helpers/test-app';
import { nextOf, SORTS } from '../helpers/plant-lists';

/**
 * The same plants, created in the same order and given the same times, on SQLite and on PostgreSQL: every query
 * answers the same bytes on both, page by page (body, Link with its cursor, Feed-Position, X-Total-Count). Runs
 * once, in the SQLite project (it starts both stores itself).
 */
const NAMES = [
  'Fern', 'fern', 'FERN', 'Fern', 'ﬁcus', 'Ficus', 'FICUS lyrata', 'Straße', 'STRASSE', 'strasse', 'İris', 'iris', 'IRIS',
  'Ägave', 'agave', 'Zebra', 'zebra', '🌵 Cactus', '🌵 cactus', 'cactus 🌵', 'Ａpple', 'apple', 'ß', 'ss', 'ǅemo', 'ǆemo', 'Ωmega', 'ωmega',
  '50% fern', 'snake_plant', 'back\\slash', '"quoted" fern', 'line\u2028separator', '\uE000 private', '𝔉raktur fern', 'ﬀ', 'ff',
];
// Short ones scan; from 3 code points PostgreSQL also asks its trigram index (with %, _ and \\ escaped for LIKE).
const QUERIES = ['', 'fern', 'FERN', 'ﬁ', 'ss', 'ß', 'İ', 'i', '🌵', '%', '_', '\\', 'ǆ', 'ω', 'ff', 'zzz', '0% f', 'e_p', 'a_e', 'k\\sl', '🌵 c', 'ïri', 'straße'];

// Times with ties (equal createdAt for neighbours) and an updatedAt order of its own.
const timeOf = (index: number, offset: number) => new Date(Date.UTC(2026, 10, 27, 9, 0, 0, 0) + Math.floor(index / 3) * 1000 + offset).toISOString();

async function seed(app: TestApp, ids: readonly bigint[]): Promise<void> {
  for (const [index, name] of NAMES.entries()) {
    // The id digit for digit: JSON.stringify cannot write a bigint.
    const response = await postPlant(app, `{"id":${ids[index] as bigint},"name":${JSON.stringify(name)}${index % 4 === 0 ? ',"tag":"shade"' : ''}}`);
    expect(response.status).toBe(200);
  }
  const rows = ids.map((id, index) => [id, timeOf(index, 0), timeOf(NAMES.length - index, 250)] as const);
  if (app.store === 'sqlite') {
    const update = app.db.prepare('/* unchecked: test */ UPDATE plants SET created_at = ?, updated_at = ? WHERE id = ?');
    for (const [id, created, updated] of rows) update.run(created, updated, id);
  } else {
    const values = rows.map(([id, created, updated]) => `(${id}, '${created}', '${updated}')`).join(', ');
    runSql(app.dbPath, `UPDATE plants p SET created_at = v.c, updated_at = v.u FROM (VALUES ${values}) AS v(id, c, u) WHERE p.id = v.id`);
  }
}

/** Every page of a query as the bytes and headers a client reads. */
async function pagesOf(app: TestApp, path: string): Promise<string[]> {
  const pages: string[] = [];
  for (let next: string | undefined = path; next !== undefined; ) {
    const response = await app.request.get(next).set({ ...bearer(), Prefer: 'count=exact' }).buffer(true).parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done(null, text));
    });
    pages.push(`${response.status} ${response.headers['feed-position']} ${response.headers['x-total-count']} ${response.headers.link ?? '-'}\n${response.body as string}`);
    next = nextOf(response);
  }
  return pages;
}

const suite = defaultStore() === 'sqlite' ? describeWith : (_service: 'postgres', name: string, body: (value: string) => void) => describe.skip(name, () => body(''));

suite('postgres', 'GET /plants on SQLite and on PostgreSQL', () => {
  let sqlite: TestApp;
  let postgres: TestApp;
  // Ids spread over int64, both signs, past 2^53.
  const ids = NAMES.map((_, index) => (BigInt(index * 7919 - 150_000) * 61_489_397_123n) % 9_223_372_036_854_775_807n);
  beforeAll(async () => {
    [sqlite, postgres] = await Promise.all([startTestApp({}, { store: 'sqlite' }), startTestApp({}, { store: 'postgres' })]);
    await Promise.all([seed(sqlite, ids), seed(postgres, ids)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([sqlite?.close(), postgres?.close()]);
  });

  it.each(SORTS)('when sort=%s, with each q, with and without tag, page by page, then both stores answer the same bytes', async (sort) => {
    for (const q of QUERIES) {
      for (const tag of ['', '&tag=shade']) {
        const path = `/plants?limit=4&sort=${sort}${q === '' ? '' : `&q=${encodeURIComponent(q)}`}${tag}`;
        const [fromSqlite, fromPostgres] = await Promise.all([pagesOf(sqlite, path), pagesOf(postgres, path)]);
        expect({ path, pages: fromPostgres }).toEqual({ path, pages: fromSqlite });
      }
    }
  });

  it('when the whole store is one page in each sort, then it holds every plant, byte for byte alike', async () => {
    const whole = await Promise.all(SORTS.map(async (sort) => [await pagesOf(sqlite, `/plants?sort=${sort}`), await pagesOf(postgres, `/plants?sort=${sort}`)]));

    for (const [fromSqlite, fromPostgres] of whole) expect(fromPostgres).toEqual(fromSqlite);
    expect((whole[0]?.[0]?.[0] ?? '').startsWith(`200 ${NAMES.length} ${NAMES.length} -\n`)).toBe(true);
  });
});
