import Ajv2020 from 'ajv/dist/2020';
import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll({ BODY_LIMIT: '1kb' });
const limited = appForAll({ RATE_LIMIT_PER_MINUTE: '1' });
let document: Record<string, any>;
let ajv: Ajv2020;

beforeAll(async () => {
  document = (await app.request.get('/openapi.json')).body;
  ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema(document, 'openapi.json');
});

const pointer = (...parts: string[]) => `openapi.json#/${parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

function responseSchema(path: string, method: string, status: number) {
  const validate = ajv.getSchema(pointer('paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema'));
  if (validate === undefined) throw new Error(`the document has no ${status} response for ${method} ${path}`);
  return validate;
}

function expectDocumented(path: string, method: string, response: { status: number; body: unknown }) {
  const validate = responseSchema(path, method, response.status);
  const valid = validate(response.body);
  expect({ status: response.status, body: response.body, errors: validate.errors ?? null }).toEqual({
    status: response.status,
    body: response.body,
    errors: null,
  });
  expect(valid).toBe(true);
}

describe('GET /openapi.json', () => {
  it('when fetched without a token, then it is an OpenAPI 3.1 document of the published contract', async () => {
    const response = await app.request.get('/openapi.json');

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      openapi: '3.1.0',
      info: { title: 'Plant Store', version: '1.0.0', license: { name: 'MIT' } },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
    });
    expect(response.body.components.schemas.NewPlant).toMatchObject({
      required: ['id', 'name'],
      properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string', maxLength: 200 }, tag: { type: 'string', maxLength: 100 } },
    });
  });

  it('when real responses of every status come back, then each validates against the document', async () => {
    const plant = aNewPlant();
    const responses: [string, string, { status: number; body: unknown }][] = [
      ['/plants', 'post', await postPlant(app, plant)],
      ['/plants', 'post', await postPlant(app, { ...plant, name: 'conflict' })],
      ['/plants', 'post', await postPlant(app, { id: 1.5, name: '' })],
      ['/plants', 'post', await postPlant(app, '{"id": ')],
      ['/plants', 'post', await postPlant(app, '[]')],
      ['/plants', 'post', await postPlant(app, aNewPlant({ padding: 'x'.repeat(2000) }))],
      ['/plants', 'post', await rawRequest(app.url, { headers: { ...bearer(), 'Content-Type': 'text/plain' }, body: '{}' })],
      ['/plants', 'post', await rawRequest(app.url, { headers: { ...bearer(), 'Content-Type': 'application/json; charset=latin1' }, body: '{}' })],
      ['/plants', 'post', await app.request.post('/plants')],
      ['/plants', 'post', await app.request.post('/plants').set('Authorization', 'Bearer nope')],
      ['/plants', 'post', await app.request.put('/plants').set(bearer())],
      ['/plants', 'post', await app.request.get('/nowhere').set(bearer())],
      ['/healthz', 'get', await app.request.get('/healthz')],
      ['/readyz', 'get', await app.request.get('/readyz')],
      ['/plants', 'post', (await postPlant(limited, aNewPlant()), await postPlant(limited, aNewPlant()))],
    ];

    expect(responses.map(([, , response]) => response.status)).toEqual([200, 400, 400, 400, 400, 400, 400, 400, 401, 401, 405, 404, 200, 200, 429]);
    for (const [path, method, response] of responses) expectDocumented(path, method, response);
  });

  it('when real responses of the read and delete operations come back, then each validates against the document', async () => {
    const plant = aNewPlant();
    await postPlant(app, plant);
    await postPlant(app, aNewPlant({ tag: undefined }));
    const responses: [string, string, { status: number; body: unknown }][] = [
      ['/plants', 'get', await app.request.get('/plants?limit=2').set(bearer())],
      ['/plants', 'get', await app.request.get('/plants?limit=0').set(bearer())],
      ['/plants', 'get', await app.request.get('/plants')],
      ['/plants/{id}', 'get', await app.request.get(`/plants/${plant.id as number}`).set(bearer())],
      ['/plants/{id}', 'get', await app.request.get('/plants/01').set(bearer())],
      ['/plants/{id}', 'get', await app.request.get('/plants/1').set(bearer())],
      ['/plants/{id}', 'get', await app.request.get('/plants/1').set('Authorization', 'Bearer nope')],
      ['/plants/{id}', 'delete', await app.request.delete(`/plants/${plant.id as number}`).set(bearer())],
      ['/plants/{id}', 'delete', await app.request.delete(`/plants/${plant.id as number}`).set(bearer())],
      ['/plants/{id}', 'delete', await app.request.post('/plants/1').set(bearer())],
      ['/plants/{id}', 'get', (await limited.request.get('/plants/1').set(bearer()), await limited.request.get('/plants/1').set(bearer()))],
    ];

    expect(responses.map(([, , response]) => response.status)).toEqual([200, 400, 401, 200, 400, 404, 401, 204, 404, 405, 429]);
    for (const [path, method, response] of responses) {
      if (response.status !== 204) expectDocumented(path, method, response);
    }
    expect(Object.keys(document.paths['/plants/{id}'].delete.responses)).toContain('204');
  });

  it('when the list is documented, then its query parameters, Prefer, and the Link, Feed-Position and count headers are there', () => {
    const list = document.paths['/plants'].get;

    expect(list.parameters).toEqual([
      expect.objectContaining({ name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } }),
      expect.objectContaining({ name: 'q', in: 'query', required: false, schema: expect.objectContaining({ type: 'string', minLength: 1, maxLength: 100, example: 'fern' }) }),
      expect.objectContaining({
        name: 'sort',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ enum: ['id', '-id', 'name', '-name', 'createdAt', '-createdAt', 'updatedAt', '-updatedAt'], default: 'id' }),
      }),
      expect.objectContaining({ name: 'tag', in: 'query', required: false, schema: expect.objectContaining({ type: 'string', minLength: 1, maxLength: 100 }) }),
      expect.objectContaining({ name: 'after', in: 'query', required: false, schema: { type: 'integer', format: 'int64' } }),
      expect.objectContaining({ name: 'cursor', in: 'query', required: false, schema: expect.objectContaining({ type: 'string' }) }),
      expect.objectContaining({ name: 'Prefer', in: 'header', required: false }),
    ]);
    expect(document.paths['/plants/{id}'].parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }),
      expect.objectContaining({ name: 'Act-As-Tenant', in: 'header', required: false }),
    ]);
    expect(Object.keys(list.responses['200'].headers)).toEqual(
      expect.arrayContaining(['Link', 'Cache-Control', 'Feed-Position', 'X-Total-Count', 'Preference-Applied', 'Vary']),
    );
  });

  it('when the document says what a body may be, then the service agrees on each sample', async () => {
    const validate = ajv.getSchema(pointer('components', 'schemas', 'NewPlant'));
    const samples: unknown[] = [
      aNewPlant(),
      aNewPlant({ tag: undefined }),
      aNewPlant({ name: '🌵'.repeat(200) }),
      aNewPlant({ name: '🌵'.repeat(201) }),
      aNewPlant({ name: '' }),
      aNewPlant({ name: '   ' }),
      aNewPlant({ name: 'a\u0007' }),
      aNewPlant({ tag: 't'.repeat(101) }),
      aNewPlant({ tag: null }),
      aNewPlant({ id: 2.5 }),
      aNewPlant({ id: '3' }),
      { name: 'no id' },
    ];

    for (const sample of samples) {
      const response = await postPlant(app, sample);
      expect({ sample, documented: validate?.(sample) }).toEqual({ sample, documented: response.status === 200 });
    }
  });
});
