import { describeWith } from '../helpers/optional-services';
import { bearer, defaultStore, startTestApp, type TestApp } from '../helpers/test-app';

/**
 * The same PUTs and batches, in the same order, on a fresh SQLite and a fresh PostgreSQL store: every answer has
 * the same bytes (status, ETag, Location, body), the stored times aside. Runs once, in the SQLite project (it
 * starts both stores itself).
 */
const EDGE = '9223372036854775807';
const STEPS: readonly [method: 'put' | 'post', path: string, body: string, headers?: Record<string, string>][] = [
  ['put', '/plants/1', '{"name":"Fern","tag":"shade"}'],
  ['put', '/plants/1', '{"name":"Fern"}', { 'If-Match': '"1"' }],
  ['put', '/plants/1', '{"name":"Fern"}', { 'If-Match': '"1"' }],
  ['put', `/plants/${EDGE}`, `{"id":${EDGE},"name":"Edge \\"é\\" 🌵"}`, { 'If-None-Match': '*' }],
  ['put', `/plants/${EDGE}`, '{"name":"Again"}', { 'If-None-Match': '*' }],
  ['put', '/plants/-9007199254740993', '{"name":"Neg"}', { 'If-Match': '*' }],
  [
    'post',
    '/plants/batch',
    `{"operations":[{"op":"create","plant":{"id":-9007199254740993,"name":"Neg","tag":"t"}},{"op":"update","id":-9007199254740993,"patch":{"tag":null}},{"op":"put","id":1,"plant":{"name":"Fern 2"},"ifMatch":"\\"2\\""},{"op":"delete","id":${EDGE}},{"op":"create","plant":{"id":7,"name":"Seven"}}]}`,
  ],
  ['post', '/plants/batch', '{"operations":[{"op":"create","plant":{"id":8,"name":"Eight"}},{"op":"put","id":7,"plant":{"name":"Late"},"ifMatch":"\\"1\\""}]}'],
  ['post', '/plants/batch', '{"operations":[{"op":"create","plant":{"id":9,"name":"Nine"}},{"op":"delete","id":12345}]}'],
  ['post', '/plants/batch', '{"operations":[{"op":"create","plant":{"id":7,"name":"Other"}}]}'],
  ['post', '/plants/batch', '{"operations":[{"op":"put","id":3,"plant":{"name":"\\u0007"}}]}'],
  ['put', '/plants/8', '{"name":"Eight"}'],
];

const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;

async function answers(app: TestApp): Promise<string[]> {
  const seen: string[] = [];
  for (const [method, path, body, headers = {}] of STEPS) {
    const response = await app.request[method](path).set({ 'Content-Type': 'application/json', ...bearer(), ...headers }).send(body);
    seen.push(`${response.status} ${response.headers.etag ?? '-'} ${response.headers.location ?? '-'}\n${response.text.replace(TIME, '<time>')}`);
  }
  const read = await app.request.get('/plants?limit=100').set(bearer());
  seen.push(read.text.replace(TIME, '<time>'));
  return seen;
}

const suite = defaultStore() === 'sqlite' ? describeWith : (_service: 'postgres', name: string, body: (value: string) => void) => describe.skip(name, () => body(''));

suite('postgres', 'PUT and POST /plants/batch on SQLite and on PostgreSQL', () => {
  let sqlite: TestApp;
  let postgres: TestApp;
  beforeAll(async () => {
    [sqlite, postgres] = await Promise.all([startTestApp({}, { store: 'sqlite' }), startTestApp({}, { store: 'postgres' })]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([sqlite?.close(), postgres?.close()]);
  });

  it('when the same writes run on both, then every answer and the final list are the same bytes', async () => {
    const fromSqlite = await answers(sqlite);
    const fromPostgres = await answers(postgres);

    expect(fromPostgres).toEqual(fromSqlite);
    expect(fromSqlite.map((answer) => answer.split(' ')[0])).toEqual(['201', '200', '412', '201', '412', '412', '200', '412', '404', '400', '400', '201', expect.any(String)]);
  });
});
