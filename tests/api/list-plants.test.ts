import { plantText, plantsText, withTimes } from '../helpers/plants';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll, perTest } from '../helpers/fixtures';

describe('GET /plants', () => {
  const shelf = appForAll();
  const ids: number[] = [];
  beforeAll(async () => {
    // Created out of order, listed in ascending id; every third without a tag, every fifth tagged "rare".
    const base = 1_000_000;
    const order = Array.from({ length: 30 }, (_, index) => base + ((index * 7) % 30));
    for (const id of order) {
      const tag = id % 3 === 0 ? undefined : id % 5 === 0 ? 'rare' : 'common';
      await postPlant(shelf, tag === undefined ? { id, name: `Plant ${id}` } : { id, name: `Plant ${id}`, tag });
    }
    ids.push(...[...order].sort((a, b) => a - b));
  });
  const list = (path: string) => shelf.request.get(path).set(bearer());
  const expected = (id: number) => withTimes(id % 3 === 0 ? { id, name: `Plant ${id}` } : { id, name: `Plant ${id}`, tag: id % 5 === 0 ? 'rare' : 'common' });

  it('when called with no parameters, then it answers up to 100 plants in ascending id, with no next link', async () => {
    const response = await list('/plants');

    expect({ status: response.status, type: response.type, cache: response.headers['cache-control'], link: response.headers.link, body: response.body }).toEqual({
      status: 200,
      type: 'application/json',
      cache: 'no-store',
      link: undefined,
      body: ids.map(expected),
    });
  });

  it('when limit cuts the list, then a Link rel=next built from the request path points after the last id', async () => {
    const response = await list('/plants?limit=4&unknown=1');

    expect({ status: response.status, link: response.headers.link, body: response.body }).toEqual({
      status: 200,
      link: `</plants?limit=4&after=${ids[3]}>; rel="next"`,
      body: ids.slice(0, 4).map(expected),
    });
  });

  it('when after is given, then only greater ids come, and the last page has no next link', async () => {
    const response = await list(`/plants?after=${ids[25]}&limit=4`);

    expect({ status: response.status, link: response.headers.link, body: response.body }).toEqual({
      status: 200,
      link: undefined,
      body: ids.slice(26).map(expected),
    });
  });

  it('when the page ends exactly at the last plant, then there is no next link', async () => {
    const response = await list(`/plants?after=${ids[19]}&limit=10`);

    expect({ link: response.headers.link, count: response.body.length }).toEqual({ link: undefined, count: 10 });
  });

  it('when tag is given, then only that tag comes, and the next link keeps it, encoded', async () => {
    const rare = ids.filter((id) => id % 3 !== 0 && id % 5 === 0);
    const first = await list('/plants?tag=rare&limit=2');
    const noMatch = await list(`/plants?tag=${encodeURIComponent('rare & "odd"')}`);

    expect({ status: first.status, link: first.headers.link, body: first.body }).toEqual({
      status: 200,
      link: `</plants?limit=2&after=${rare[1]}&tag=rare>; rel="next"`,
      body: rare.slice(0, 2).map(expected),
    });
    expect({ status: noMatch.status, body: noMatch.body }).toEqual({ status: 200, body: [] });
  });

  it('when the Link header is followed verbatim, then it walks every plant once, in order, to a page with no link', async () => {
    const seen: number[] = [];
    let path: string | undefined = '/plants?limit=7';
    let pages = 0;

    while (path !== undefined) {
      const response = await list(path);
      expect(response.status).toBe(200);
      seen.push(...(response.body as { id: number }[]).map((plant) => plant.id));
      path = /^<([^>]+)>; rel="next"$/.exec(response.headers.link ?? '')?.[1];
      pages += 1;
    }

    expect({ pages, seen }).toEqual({ pages: 5, seen: ids });
  });

  it('when the request came in on another path spelling, then the link is built from that path', async () => {
    const response = await list('/PLANTS?limit=1');

    expect(response.headers.link).toBe(`</PLANTS?limit=1&after=${ids[0]}>; rel="next"`);
  });

  it('when HEAD is sent, then it answers the headers of GET, Link included, with no body', async () => {
    const response = await shelf.request.head('/plants?limit=2').set(bearer());

    expect({ status: response.status, link: response.headers.link, cache: response.headers['cache-control'], text: response.text }).toEqual({
      status: 200,
      link: `</plants?limit=2&after=${ids[1]}>; rel="next"`,
      cache: 'no-store',
      text: undefined,
    });
  });

  it.each([
    ['limit=0', 'limit: must be an integer from 1 to 1000', 'out_of_range'],
    ['limit=-1', 'limit: must be an integer from 1 to 1000', 'out_of_range'],
    ['limit=1001', 'limit: must be an integer from 1 to 1000', 'out_of_range'],
    ['limit=abc', 'limit: must be an integer from 1 to 1000', 'type'],
    ['limit=1.5', 'limit: must be an integer from 1 to 1000', 'type'],
    ['limit=', 'limit: must be an integer from 1 to 1000', 'type'],
    ['limit=010', 'limit: must be an integer from 1 to 1000', 'type'],
    ['limit=1&limit=2', 'limit: must be given once', 'repeated'],
    ['after=abc', 'after: must be an integer from -9223372036854775808 to 9223372036854775807 in plain decimal (no +, no leading zeros)', 'type'],
    ['after=9223372036854775808', 'after: must be an integer from -9223372036854775808 to 9223372036854775807 in plain decimal (no +, no leading zeros)', 'out_of_range'],
    ['after=%2B1', 'after: must be an integer from -9223372036854775808 to 9223372036854775807 in plain decimal (no +, no leading zeros)', 'type'],
    ['after=1&after=2', 'after: must be given once', 'repeated'],
    ['tag=', 'tag: must have at least one non-whitespace character', 'too_short'],
    ['tag=%01', 'tag: must not contain control characters (U+0000 to U+001F, U+007F)', 'invalid_characters'],
    [`tag=${'t'.repeat(101)}`, 'tag: must be at most 100 characters (Unicode code points)', 'too_long'],
    ['tag=a&tag=b', 'tag: must be given once', 'repeated'],
  ])('when the query is %s, then it answers 400 naming the parameter', async (query, message, code) => {
    const response = await list(`/plants?${query}`);

    const [field = '', rule] = message.split(': ');
    expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: { error: 40012, message, fields: [{ field, code, message: rule }] } });
  });

  it('when 1000 is the limit and after is the lowest int64, then it is accepted', async () => {
    const response = await list('/plants?limit=1000&after=-9223372036854775808');

    expect({ status: response.status, count: response.body.length }).toEqual({ status: 200, count: ids.length });
  });
});

describe('int64 ids across create, list, fetch and delete', () => {
  const open = perTest();

  it('when plants have ids at the int64 edges, then the list writes each id exactly, and each can be fetched and deleted', async () => {
    const edges = ['-9223372036854775808', '-9007199254740993', '9007199254740993', '9223372036854775807'];
    const edgeApp = await open.app();

    for (const id of edges) expect((await postPlant(edgeApp, `{"id": ${id}, "name": "n${id}"}`)).status).toBe(200);

    const listed = await edgeApp.request.get('/plants').set(bearer());
    const page = await edgeApp.request.get('/plants?limit=1&after=9007199254740993').set(bearer());
    const fetched = await edgeApp.request.get('/plants/9223372036854775807').set(bearer());
    const deleted = await edgeApp.request.delete('/plants/-9223372036854775808').set(bearer());
    const after = await edgeApp.request.get('/plants').set(bearer());

    expect(listed.text).toEqual(plantsText(edges.map((id) => `{"id":${id},"name":"n${id}"}`)));
    expect(page.text).toEqual(plantsText(['{"id":9223372036854775807,"name":"n9223372036854775807"}']));
    expect(fetched.text).toEqual(plantText('{"id":9223372036854775807,"name":"n9223372036854775807"}'));
    expect(deleted.status).toBe(204);
    expect(after.text).toEqual(plantsText(edges.slice(1).map((id) => `{"id":${id},"name":"n${id}"}`)));
  });
});
