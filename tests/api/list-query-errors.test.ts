import { uniqueId } from '../helpers/plants';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { nextOf } from '../helpers/plant-lists';

const app = appForAll();
const tag = `errors-${uniqueId()}`;
let cursor = '';
beforeAll(async () => {
  for (const name of ['Aloe', 'Basil', 'Chives']) expect((await postPlant(app, { id: uniqueId(), name, tag })).status).toBe(200);
  const first = await app.request.get(`/plants?tag=${tag}&sort=name&limit=1`).set(bearer());
  cursor = /cursor=([^&>]+)/.exec(nextOf(first) ?? '')?.[1] ?? '';
});

/** The answer's status, code and fields: what a client shows beside the parameter. */
async function refusal(path: string) {
  const response = await app.request.get(path).set(bearer());
  const body = response.body as { error: number; fields?: { field: string; code: string }[] };
  return { status: response.status, error: body.error, fields: body.fields?.map(({ field, code }) => ({ field, code })) };
}
const named = (error: number, field: string, code: string) => ({ status: 400, error, fields: [{ field, code }] });

describe('GET /plants refusals of q and sort', () => {
  it('when q is empty, blank, too long or repeated, then it is a 400 40012 naming q', async () => {
    expect({
      empty: await refusal('/plants?q='),
      blank: await refusal('/plants?q=%20%20'),
      long: await refusal(`/plants?q=${'a'.repeat(101)}`),
      repeated: await refusal('/plants?q=fern&q=palm'),
      control: await refusal('/plants?q=a%07'),
    }).toEqual({
      empty: named(40012, 'q', 'too_short'),
      blank: named(40012, 'q', 'blank'),
      long: named(40012, 'q', 'too_long'),
      repeated: named(40012, 'q', 'repeated'),
      control: named(40012, 'q', 'invalid_characters'),
    });
  });

  it('when sort is unknown, then it is a 400 40040 naming sort, its message listing the eight; repeated, a 40012', async () => {
    const response = await app.request.get('/plants?sort=price').set(bearer());

    expect({ status: response.status, body: response.body as unknown }).toEqual({
      status: 400,
      body: {
        error: 40040,
        message: 'sort: must be one of id, -id, name, -name, createdAt, -createdAt, updatedAt, -updatedAt; - before a member is descending.',
        fields: [{ field: 'sort', code: 'unknown_value', message: 'must be one of id, -id, name, -name, createdAt, -createdAt, updatedAt, -updatedAt; - before a member is descending.' }],
      },
    });
    expect({ repeated: await refusal('/plants?sort=name&sort=id'), cased: await refusal('/plants?sort=Name') }).toEqual({
      repeated: named(40012, 'sort', 'repeated'),
      cased: named(40040, 'sort', 'unknown_value'),
    });
  });
});

describe('GET /plants refusals of after and cursor', () => {
  it('when after and cursor come together, or each with the other kind of sort, then it is a 400 40042 naming the one at fault', async () => {
    expect({
      both: await refusal(`/plants?tag=${tag}&sort=name&after=1&cursor=${cursor}`),
      afterWithName: await refusal('/plants?sort=name&after=5'),
      afterWithTime: await refusal('/plants?sort=-createdAt&after=5'),
      cursorWithId: await refusal(`/plants?sort=id&cursor=${cursor}`),
      cursorWithDefault: await refusal(`/plants?cursor=${cursor}`),
      cursorWithMinusId: await refusal(`/plants?sort=-id&cursor=${cursor}`),
    }).toEqual({
      both: named(40042, 'cursor', 'conflict'),
      afterWithName: named(40042, 'after', 'conflict'),
      afterWithTime: named(40042, 'after', 'conflict'),
      cursorWithId: named(40042, 'cursor', 'conflict'),
      cursorWithDefault: named(40042, 'cursor', 'conflict'),
      cursorWithMinusId: named(40042, 'cursor', 'conflict'),
    });
  });

  it('when the cursor was made for another sort, q or tag, then it is a 400 40041 naming cursor, code mismatch', async () => {
    expect({
      sort: await refusal(`/plants?tag=${tag}&sort=-name&cursor=${cursor}`),
      tag: await refusal(`/plants?tag=other&sort=name&cursor=${cursor}`),
      noTag: await refusal(`/plants?sort=name&cursor=${cursor}`),
      q: await refusal(`/plants?tag=${tag}&q=a&sort=name&cursor=${cursor}`),
      followed: (await app.request.get(`/plants?tag=${tag}&sort=name&limit=1&cursor=${cursor}`).set(bearer())).status,
    }).toEqual({
      sort: named(40041, 'cursor', 'mismatch'),
      tag: named(40041, 'cursor', 'mismatch'),
      noTag: named(40041, 'cursor', 'mismatch'),
      q: named(40041, 'cursor', 'mismatch'),
      followed: 200,
    });
  });

  it('when the cursor is not one the service made, then it is a 400 40041 naming cursor, code malformed', async () => {
    const forged = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');

    expect({
      garbage: await refusal('/plants?sort=name&cursor=not-a-cursor'),
      characters: await refusal('/plants?sort=name&cursor=abc%2Bdef'),
      cut: await refusal(`/plants?tag=${tag}&sort=name&cursor=${cursor.slice(0, 10)}`),
      empty: await refusal('/plants?sort=name&cursor='),
      array: await refusal(`/plants?sort=name&cursor=${forged([1, 2])}`),
      idSort: await refusal(`/plants?sort=name&cursor=${forged({ s: 'id', k: ['1'] })}`),
      keys: await refusal(`/plants?sort=name&cursor=${forged({ s: 'name', k: ['a', 'a'] })}`),
      idRange: await refusal(`/plants?sort=name&cursor=${forged({ s: 'name', k: ['a', 'a', '9223372036854775808'] })}`),
      time: await refusal(`/plants?sort=createdAt&cursor=${forged({ s: 'createdAt', k: ['yesterday', '1'] })}`),
      nul: await refusal(`/plants?sort=name&cursor=${forged({ s: 'name', k: ['a\u0000', 'a', '1'] })}`),
      surrogate: await refusal(`/plants?sort=name&cursor=${forged({ s: 'name', k: ['\ud800', 'a', '1'] })}`),
      long: await refusal(`/plants?sort=name&cursor=${'A'.repeat(12_289)}`),
      repeated: await refusal(`/plants?sort=name&cursor=${cursor}&cursor=${cursor}`),
    }).toEqual({
      garbage: named(40041, 'cursor', 'malformed'),
      characters: named(40041, 'cursor', 'malformed'),
      cut: named(40041, 'cursor', 'malformed'),
      empty: named(40041, 'cursor', 'malformed'),
      array: named(40041, 'cursor', 'malformed'),
      idSort: named(40041, 'cursor', 'malformed'),
      keys: named(40041, 'cursor', 'malformed'),
      idRange: named(40041, 'cursor', 'malformed'),
      time: named(40041, 'cursor', 'malformed'),
      nul: named(40041, 'cursor', 'malformed'),
      surrogate: named(40041, 'cursor', 'malformed'),
      long: named(40041, 'cursor', 'malformed'),
      repeated: named(40012, 'cursor', 'repeated'),
    });
  });

  it('when a forged cursor is well formed, then it is only a place to start: the page after those keys', async () => {
    const forged = Buffer.from(JSON.stringify({ s: 'name', t: tag, k: ['b', 'b', '0'] })).toString('base64url');

    const response = await app.request.get(`/plants?tag=${tag}&sort=name&cursor=${forged}`).set(bearer());

    expect({ status: response.status, names: (response.body as { name: string }[]).map((plant) => plant.name) }).toEqual({ status: 200, names: ['Basil', 'Chives'] });
  });
});
