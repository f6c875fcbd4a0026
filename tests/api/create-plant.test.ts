import { aNewPlant, uniqueId } from '../helpers/plants';
import { postPlant, storedPlant, storedRows } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll();

function storedById(id: bigint | number) {
  return storedPlant(app, id);
}

describe('POST /plants', () => {
  it('when the plant is new, then it answers 200 with name and tag, never the id, and the row is on disk', async () => {
    const plant = aNewPlant({ name: 'Ficus lyrata', tag: 'indoor' });

    const response = await postPlant(app, plant);

    expect({ status: response.status, type: response.type, body: response.body }).toEqual({
      status: 200,
      type: 'application/json',
      body: { name: 'Ficus lyrata', tag: 'indoor' },
    });
    expect(storedById(plant.id as number)).toEqual({ id: BigInt(plant.id as number), name: 'Ficus lyrata', tag: 'indoor' });
  });

  it('when tag is absent, then the response leaves tag out and the row stores no tag', async () => {
    const { tag: _tag, ...plant } = aNewPlant({ name: 'Aloe vera' });

    const response = await postPlant(app, plant);

    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { name: 'Aloe vera' } });
    expect(storedById(plant.id as number)).toEqual({ id: BigInt(plant.id as number), name: 'Aloe vera', tag: null });
  });

  it('when strings have emoji, combining marks and outer spaces, then they are stored and echoed exactly', async () => {
    const name = '  Cafe\u0301 🌵 שלום  ';
    const tag = ' e\u0301 ';
    const plant = aNewPlant({ name, tag });

    const response = await postPlant(app, plant);

    expect(response.body).toEqual({ name, tag });
    expect(storedById(plant.id as number)).toEqual({ id: BigInt(plant.id as number), name, tag });
  });

  it('when the body has unknown fields, then they are neither echoed nor stored', async () => {
    const plant = aNewPlant({ name: 'Pilea', color: 'green', id2: 5 });

    const response = await postPlant(app, plant);

    expect(response.body).toEqual({ name: 'Pilea', tag: 'indoor' });
    expect(Object.keys(storedById(plant.id as number) as object)).toEqual(['id', 'name', 'tag']);
  });

  it('when the identical plant is sent again, then it answers 200 again and keeps one row', async () => {
    const plant = aNewPlant();

    const first = await postPlant(app, plant);
    const retry = await postPlant(app, plant);

    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.body).toEqual(first.body);
    expect(storedRows(app).filter((row) => row.id === BigInt(plant.id as number))).toHaveLength(1);
  });

  it.each([
    ['another name', { name: 'Something else' }],
    ['another tag', { tag: 'outdoor' }],
    ['no tag where one was stored', { tag: undefined }],
  ])('when the same id comes with %s, then it answers 400 with the conflict code and the stored plant is unchanged', async (_case, change) => {
    const plant = aNewPlant({ name: 'Original', tag: 'indoor' });
    await postPlant(app, plant);

    const response = await postPlant(app, { ...plant, ...change });

    expect({ status: response.status, error: response.body.error }).toEqual({ status: 400, error: 40007 });
    expect(response.body.message).toMatch(/^id: /);
    expect(storedById(plant.id as number)).toEqual({ id: BigInt(plant.id as number), name: 'Original', tag: 'indoor' });
  });

  it('when a plant without tag exists and the same id comes with a tag, then it is a conflict', async () => {
    const { tag: _tag, ...plant } = aNewPlant();
    await postPlant(app, plant);

    const response = await postPlant(app, { ...plant, tag: 'new' });

    expect(response.status).toBe(400);
    expect(response.body.error).toBe(40007);
  });

  it('when 40 different plants race for one id, then exactly one wins and the row is the winner', async () => {
    const id = uniqueId();
    const contenders = Array.from({ length: 40 }, (_, index) => ({ id, name: `Contender ${index}` }));

    const responses = await Promise.all(contenders.map((plant) => postPlant(app, plant)));

    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    expect(responses.filter((response) => response.status === 400 && response.body.error === 40007)).toHaveLength(39);
    expect(storedById(id)).toEqual({ id: BigInt(id), name: winners[0]?.body.name, tag: null });
  });

  it('when 40 identical plants race for one id, then all answer 200 and one row is stored', async () => {
    const plant = aNewPlant();

    const responses = await Promise.all(Array.from({ length: 40 }, () => postPlant(app, plant)));

    expect(responses.map((response) => response.status)).toEqual(Array(40).fill(200));
    expect(storedRows(app).filter((row) => row.id === BigInt(plant.id as number))).toHaveLength(1);
  });
});

describe('POST /plants id rules', () => {
  it.each([
    ['the smallest int64', '-9223372036854775808', -9223372036854775808n],
    ['the largest int64', '9223372036854775807', 9223372036854775807n],
    ['2^53 + 1, which a double rounds', '9007199254740993', 9007199254740993n],
    ['-(2^53 + 1)', '-9007199254740993', -9007199254740993n],
    ['zero', '0', 0n],
    ['a negative id', '-42', -42n],
  ])('when the id is %s, then it is stored exactly', async (_case, literal, expected) => {
    const rowsBefore = storedRows(app).filter((row) => row.id === expected);
    expect(rowsBefore).toEqual([]);

    const response = await postPlant(app, `{"id": ${literal}, "name": "Edge ${literal}"}`);

    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { name: `Edge ${literal}` } });
    expect(storedById(expected)).toEqual({ id: expected, name: `Edge ${literal}`, tag: null });
  });

  it('when 2^53 + 1 is stored, then 2^53 (its double neighbour) is still a free id', async () => {
    await postPlant(app, '{"id": 9007199254740995, "name": "odd"}');

    const neighbour = await postPlant(app, '{"id": 9007199254740996, "name": "even"}');

    expect(neighbour.status).toBe(200);
    expect(storedById(9007199254740995n)).toEqual({ id: 9007199254740995n, name: 'odd', tag: null });
  });

  it.each([
    ['7.0', 17_000_001n, '17000001.0'],
    ['7e2', 1_700_000n, '17e5'],
    ['7.5e1', 175n, '1.75E2'],
    ['9223372036854775807.0', 9223372036854775806n, '9223372036854775806.000'],
  ])('when the id is written as %s (no fractional part), then it is an integer', async (_case, expected, literal) => {
    const response = await postPlant(app, `{"id": ${literal}, "name": "Float form ${literal}"}`);

    expect(response.status).toBe(200);
    expect(storedById(expected)).toEqual({ id: expected, name: `Float form ${literal}`, tag: null });
  });

  it.each([
    ['2^63', '9223372036854775808', 'out_of_range'],
    ['-2^63 - 1', '-9223372036854775809', 'out_of_range'],
    ['a fraction', '1.5', 'type'],
    ['a tiny fraction', '1.0000000000000001', 'type'],
    ['1e400', '1e400', 'type'],
    ['1e-7', '1e-7', 'type'],
    ['a string', '"12"', 'type'],
    ['null', 'null', 'type'],
    ['a boolean', 'true', 'type'],
    ['an object', '{"value": 1}', 'type'],
  ])('when the id is %s, then it answers 400 naming id with its field code and stores nothing', async (_case, literal, code) => {
    const before = storedRows(app).length;

    const response = await postPlant(app, `{"id": ${literal}, "name": "Bad id"}`);

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 40006,
        message: 'id: must be an integer from -9223372036854775808 to 9223372036854775807',
        fields: [{ field: 'id', code, message: 'must be an integer from -9223372036854775808 to 9223372036854775807' }],
      },
    });
    expect(storedRows(app)).toHaveLength(before);
  });

  it('when the id is missing, then it answers 400 saying id is required', async () => {
    const response = await postPlant(app, { name: 'No id' });

    expect(response.body).toEqual({ error: 40006, message: 'id: is required', fields: [{ field: 'id', code: 'required', message: 'is required' }] });
  });
});

describe('POST /plants name and tag rules', () => {
  const cactus = '🌵';

  it.each([
    ['name of 200 emoji (400 UTF-16 units)', { name: cactus.repeat(200) }],
    ['name of 200 ASCII characters', { name: 'n'.repeat(200) }],
    ['tag of 100 emoji', { tag: cactus.repeat(100) }],
    ['name with a tab-free inner space', { name: 'a b' }],
  ])('when the %s, then it is accepted', async (_case, fields) => {
    const plant = aNewPlant(fields);

    const response = await postPlant(app, plant);

    expect(response.status).toBe(200);
    expect(storedById(plant.id as number)).toMatchObject(fields);
  });

  it.each([
    ['name is missing', { name: undefined }, 'name: is required', 'required'],
    ['name is empty', { name: '' }, 'name: must have at least one non-whitespace character', 'too_short'],
    ['name is white space only', { name: ' \u00a0\u2003' }, 'name: must have at least one non-whitespace character', 'blank'],
    ['name has 201 characters', { name: cactus.repeat(201) }, 'name: must be at most 200 characters (Unicode code points)', 'too_long'],
    ['name is a number', { name: 5 }, 'name: must be a string', 'type'],
    ['name is null', { name: null }, 'name: must be a string', 'type'],
    ['name has NUL', { name: 'a\u0000b' }, 'name: must not contain control characters (U+0000 to U+001F, U+007F)', 'invalid_characters'],
    ['name has a newline', { name: 'a\nb' }, 'name: must not contain control characters (U+0000 to U+001F, U+007F)', 'invalid_characters'],
    ['name has DEL', { name: 'a\u007fb' }, 'name: must not contain control characters (U+0000 to U+001F, U+007F)', 'invalid_characters'],
    ['name has a lone high surrogate', { name: 'a\ud800b' }, 'name: must not contain unpaired surrogates (malformed UTF-16)', 'invalid_characters'],
    ['name has a lone low surrogate', { name: '\udc00' }, 'name: must not contain unpaired surrogates (malformed UTF-16)', 'invalid_characters'],
    ['tag is empty', { tag: '' }, 'tag: must have at least one non-whitespace character', 'too_short'],
    ['tag is blank', { tag: '   ' }, 'tag: must have at least one non-whitespace character', 'blank'],
    ['tag has 101 characters', { tag: 't'.repeat(101) }, 'tag: must be at most 100 characters (Unicode code points)', 'too_long'],
    ['tag is null', { tag: null }, 'tag: must be a string', 'type'],
    ['tag has a unit separator', { tag: 'a\u001fb' }, 'tag: must not contain control characters (U+0000 to U+001F, U+007F)', 'invalid_characters'],
  ])('when %s, then it answers 400 with the field, the rule and the code, storing nothing', async (_case, fields, message, code) => {
    const plant = aNewPlant(fields);

    const response = await postPlant(app, plant);

    const [field = '', rule] = message.split(': ');
    expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: { error: 40006, message, fields: [{ field, code, message: rule }] } });
    expect(storedById(plant.id as number)).toBeUndefined();
  });

  it('when several fields break rules, then the message names each', async () => {
    const response = await postPlant(app, { id: 'x', name: '', tag: 7 });

    expect(response.body).toEqual({
      error: 40006,
      message:
        'id: must be an integer from -9223372036854775808 to 9223372036854775807; ' +
        'name: must have at least one non-whitespace character; tag: must be a string',
      fields: [
        { field: 'id', code: 'type', message: 'must be an integer from -9223372036854775808 to 9223372036854775807' },
        { field: 'name', code: 'too_short', message: 'must have at least one non-whitespace character' },
        { field: 'tag', code: 'type', message: 'must be a string' },
      ],
    });
  });
});
