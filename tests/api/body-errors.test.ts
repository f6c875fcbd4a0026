import { aNewPlant, uniqueId } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { bearer, postPlant, storedRows } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll({ BODY_LIMIT: '1kb' });

function post(headers: Record<string, string>, body?: string) {
  const request = app.request.post('/plants').set({ ...bearer(), ...headers });
  return body === undefined ? request : request.send(body);
}

describe('POST /plants with a body it cannot read', () => {
  it.each([
    ['malformed JSON', '{"id": 1, "name": "x"', 40001, /^The body is not valid JSON: .*position/],
    ['a trailing comma', '{"id": 1, "name": "x",}', 40001, /^The body is not valid JSON: /],
    ['JSON with a comment', '{"id": 1 /* one */, "name": "x"}', 40001, /^The body is not valid JSON: /],
    ['NaN as a number', '{"id": NaN, "name": "x"}', 40001, /^The body is not valid JSON: /],
    ['an empty body', '', 40001, /^The body is empty; send a JSON object\.$/],
    ['an array', '[{"id": 1, "name": "x"}]', 40002, /^The body must be a JSON object, not an array\.$/],
    ['null', 'null', 40002, /^The body must be a JSON object, not null\.$/],
    ['a string', '"plant"', 40002, /^The body must be a JSON object, not a string\.$/],
    ['a number', '12', 40002, /^The body must be a JSON object, not a number\.$/],
  ])('when the body is %s, then it answers 400 with its code and stores nothing', async (_case, body, code, message) => {
    const before = storedRows(app).length;

    const response = await post({ 'Content-Type': 'application/json' }, body);

    expect({ status: response.status, type: response.type, error: response.body.error }).toEqual({
      status: 400,
      type: 'application/json',
      error: code,
    });
    expect(response.body.message).toMatch(message);
    expect(storedRows(app)).toHaveLength(before);
  });

  it('when the JSON is invalid, then the message does not copy the body back', async () => {
    const response = await post({ 'Content-Type': 'application/json' }, '{"id": 1, "name": "secret-ish" oops}');

    expect(response.body.error).toBe(40001);
    expect(response.body.message).not.toContain('secret-ish');
  });

  it.each([
    ['missing', undefined, /^Content-Type is missing/],
    ['text/plain', 'text/plain', /^Content-Type text\/plain is not JSON/],
    ['form data', 'application/x-www-form-urlencoded', /is not JSON/],
    ['malformed', 'application/json; charset', /^Content-Type is malformed/],
  ])('when Content-Type is %s, then it answers 400 with code 40003', async (_case, type, message) => {
    const headers: Record<string, string> = type === undefined ? bearer() : { 'Content-Type': type, ...bearer() };

    const response = await rawRequest(app.url, { headers, body: JSON.stringify(aNewPlant()) });

    expect({ status: response.status, error: (response.body as { error: number }).error }).toEqual({ status: 400, error: 40003 });
    expect((response.body as { message: string }).message).toMatch(message);
  });

  it.each(['application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/merge-patch+json', 'Application/JSON'])(
    'when Content-Type is %s, then the body is read',
    async (type) => {
      const response = await post({ 'Content-Type': type }, JSON.stringify(aNewPlant({ name: 'typed' })));

      expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { name: 'typed', tag: 'indoor' } });
    },
  );

  it.each(['iso-8859-1', 'utf-16'])('when the charset is %s, then it answers 400 with code 40004', async (charset) => {
    const response = await post({ 'Content-Type': `application/json; charset=${charset}` }, JSON.stringify(aNewPlant()));

    expect(response.body).toEqual({
      error: 40004,
      message: 'The body must be UTF-8; drop the charset parameter or send charset=utf-8.',
    });
    expect(response.status).toBe(400);
  });

  it('when the bytes are not valid UTF-8, then it answers 400 with code 40004 and stores nothing', async () => {
    const plant = aNewPlant();
    const bytes = Buffer.concat([Buffer.from(`{"id": ${plant.id as number}, "name": "caf`), Buffer.from([0xe9]), Buffer.from('"}')]);

    const response = await rawRequest(app.url, { headers: { 'Content-Type': 'application/json', ...bearer() }, body: bytes });

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { error: 40004, message: 'The body is not valid UTF-8.' },
    });
    expect(storedRows(app).some((row) => row.id === BigInt(plant.id as number))).toBe(false);
  });

  it('when the body is larger than BODY_LIMIT, then it answers 400 with code 40005 and stores nothing', async () => {
    const plant = aNewPlant({ name: 'big', padding: 'x'.repeat(2000) });

    const response = await postPlant(app, plant);

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { error: 40005, message: 'The body is larger than the 1024 bytes this service accepts.' },
    });
    expect(storedRows(app).some((row) => row.id === BigInt(plant.id as number))).toBe(false);
  });

  it('when the body is compressed, then it answers 400 with code 40003', async () => {
    const response = await post({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, '\u001f\u008b');

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { error: 40003, message: 'Content-Encoding is not supported; send the body uncompressed.' },
    });
  });

  it('when a key repeats, then the last value counts, as in JSON.parse, on both number paths', async () => {
    const plant = aNewPlant();

    const fast = await post({ 'Content-Type': 'application/json' }, `{"id": ${plant.id as number}, "name": "first", "name": "last"}`);
    const exact = await post({ 'Content-Type': 'application/json' }, '{"id": 9007199254740999, "name": "first", "name": "last"}');

    expect([fast.body, exact.body]).toEqual([{ name: 'last' }, { name: 'last' }]);
  });
});

describe('nesting depth', () => {
  const deepApp = appForAll({ BODY_LIMIT: '64kb' });

  const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
  const DEEP = { error: 40009, message: 'The body nests arrays and objects deeper than 32 levels.' };

  it.each([
    ['integers only (the JSON.parse path)', '1'],
    ['a decimal inside (the lossless path)', '1.5'],
  ])('when a body nests 5,000 levels with %s, then it answers 400 40009', async (_case, inner) => {
    const body = `{"id": 1, "name": "deep", "extra": ${nested(5000, inner)}}`;

    const response = await postPlant(deepApp, body);

    expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: DEEP });
  });

  it('when a body nests 33 levels, then it answers 400 40009; at 32 levels the plant is stored', async () => {
    const tooDeep = await postPlant(deepApp, `{"id": ${uniqueId()}, "name": "deep", "extra": ${nested(32, '0.5')}}`);
    const atLimit = await postPlant(deepApp, `{"id": ${uniqueId()}, "name": "deep", "extra": ${nested(31, '0.5')}}`);

    expect({ status: tooDeep.status, body: tooDeep.body }).toEqual({ status: 400, body: DEEP });
    expect({ status: atLimit.status, body: atLimit.body }).toEqual({ status: 200, body: { name: 'deep' } });
  });

  it('when brackets are inside a string, then they do not count as nesting', async () => {
    const response = await postPlant(deepApp, { id: uniqueId(), name: `${'['.repeat(100)}"\\`, tag: '{'.repeat(100) });

    expect(response.status).toBe(200);
  });
});
