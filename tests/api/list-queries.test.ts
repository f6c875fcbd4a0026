import { uniqueId } from '../helpers/plants';
import { bearer, postPlant, type TestApp } from '../helpers/test-app';
import { appForAll, perTest } from '../helpers/fixtures';
import { inOrder, keyOf, SORTS, walk, type Listed } from '../helpers/plant-lists';

const app = appForAll();
const list = (path: string, headers: Record<string, string> = {}) => app.request.get(path).set({ ...bearer(), ...headers });
const encoded = (text: string) => encodeURIComponent(text);

async function createAll(target: TestApp, plants: readonly Record<string, unknown>[]): Promise<void> {
  for (const plant of plants) expect((await postPlant(target, plant)).status).toBe(200);
}

/** Names a search must tell apart: case, accents, a ligature, ß, dotted İ, emoji, and LIKE's special characters. */
const NAMES = ['ﬁcus lyrata', 'FICUS Benjamina', 'Ficus elastica', 'Straße fern', 'STRASSE palm', 'İstanbul tulip', 'istanbul rose', 'Cactus 🌵 small', '50% off fern', 'snake_plant', 'back\\slash ivy', 'Café ivy', 'CAFÉ IVY', 'Zebra plant'];

describe('GET /plants?q=', () => {
  const tag = `q-${uniqueId()}`;
  beforeAll(() => createAll(app, NAMES.map((name) => ({ id: uniqueId(), name, tag }))));
  const names = async (q: string) => ((await list(`/plants?tag=${tag}&q=${encoded(q)}`)).body as Listed[]).map((plant) => plant.name).sort();

  it('when q differs from names in case or compatibility form, then the names whose NFKC lower-case form contains it come', async () => {
    expect({
      ficus: await names('FICUS'),
      ligature: await names('ﬁ'),
      cafe: await names('café'),
      cafeDecomposed: await names('cafe\u0301'),
    }).toEqual({
      ficus: ['FICUS Benjamina', 'Ficus elastica', 'ﬁcus lyrata'],
      ligature: ['FICUS Benjamina', 'Ficus elastica', 'ﬁcus lyrata'],
      cafe: ['CAFÉ IVY', 'Café ivy'],
      // NFKC composes é: the decomposed form finds the same plants.
      cafeDecomposed: ['CAFÉ IVY', 'Café ivy'],
    });
  });

  it('when q holds ß, İ or an emoji, then it matches by the default lower-casing, no locale, no case folding', async () => {
    expect({
      eszett: await names('straße'),
      ss: await names('STRASSE'),
      dottedCapital: await names('İ'),
      plainI: await names('istanbul'),
      emoji: await names('🌵'),
    }).toEqual({
      eszett: ['Straße fern'],
      ss: ['STRASSE palm'],
      // İ lower-cases to i + U+0307: only the name that has it.
      dottedCapital: ['İstanbul tulip'],
      plainI: ['istanbul rose'],
      emoji: ['Cactus 🌵 small'],
    });
  });

  it('when q holds %, _ or \\, then each is a literal character, not a pattern', async () => {
    expect({ percent: await names('%'), underscore: await names('_'), backslash: await names('\\'), star: await names('*') }).toEqual({
      percent: ['50% off fern'],
      underscore: ['snake_plant'],
      backslash: ['back\\slash ivy'],
      star: [],
    });
  });

  it('when q and tag are both given, then both must hold, and the next link keeps q, tag and limit', async () => {
    const response = await list(`/plants?tag=${tag}&q=ivy&limit=2`);

    expect({ status: response.status, count: (response.body as Listed[]).length, link: response.headers.link }).toEqual({
      status: 200,
      count: 2,
      link: expect.stringMatching(new RegExp(`^</plants\\?limit=2&q=ivy&after=-?\\d+&tag=${tag}>; rel="next"$`)) as unknown,
    });
    expect((await walk(app, `/plants?tag=${tag}&q=ivy&limit=2`)).plants.map((plant) => plant.name).sort()).toEqual(['CAFÉ IVY', 'Café ivy', 'back\\slash ivy']);
  });
});

describe('GET /plants?sort=', () => {
  const tag = `sort-${uniqueId()}`;
  let plants: Listed[] = [];
  beforeAll(async () => {
    // Same keys with other exact names, the same name twice (ties by id), and creates in one batch (equal times).
    const names = ['Fern', 'fern', 'FERN', 'Fern', 'ﬁg', 'Fig', 'Ägave', 'agave', 'Zebra', '🌵 cactus', '\uFF21pple', 'apple', 'ß', 'ss'];
    await Promise.all(names.slice(0, 7).map((name) => postPlant(app, { id: uniqueId(), name, tag })));
    await createAll(app, names.slice(7).map((name) => ({ id: uniqueId(), name, tag })));
    const edited = ((await list(`/plants?tag=${tag}&limit=3`)).body as Listed[]).map((plant) => plant.id);
    for (const id of edited) {
      const response = await app.request.patch(`/plants/${id}`).set({ 'Content-Type': 'application/json', ...bearer() }).send(JSON.stringify({ tag }));
      expect(response.status).toBe(200);
      await app.request.patch(`/plants/${id}`).set({ 'Content-Type': 'application/json', ...bearer() }).send('{"name":"renamed"}');
    }
    plants = (await list(`/plants?tag=${tag}`)).body as Listed[];
  });

  it.each(SORTS)('when sort=%s, then one page holds every plant in the contract\'s order, and pages of 3 hold the same', async (sort) => {
    const whole = await list(`/plants?tag=${tag}&sort=${sort}`);
    const paged = await walk(app, `/plants?tag=${tag}&sort=${sort}&limit=3`);

    expect({ status: whole.status, link: whole.headers.link, order: (whole.body as Listed[]).map((plant) => plant.id) }).toEqual({
      status: 200,
      link: undefined,
      order: inOrder(plants, sort).map((plant) => plant.id),
    });
    expect(paged.plants).toEqual(whole.body);
    expect(paged.pages).toBe(Math.ceil(plants.length / 3));
  });

  it('when sorting by name, then the key is compared by code point: no collation puts "Ägave" beside "agave"', async () => {
    const names = ((await list(`/plants?tag=${tag}&sort=name`)).body as Listed[]).map((plant) => plant.name);

    expect(names.map(keyOf)).toEqual([...names.map(keyOf)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    expect(names.indexOf('Ägave')).toBeGreaterThan(names.indexOf('Zebra'));
  });

  it('when sort is name and more follow, then the Link carries sort and an opaque cursor, never after', async () => {
    const response = await list(`/plants?tag=${tag}&sort=-name&limit=2`);

    expect(response.headers.link).toMatch(new RegExp(`^</plants\\?limit=2&sort=-name&cursor=[A-Za-z0-9_-]+&tag=${tag}>; rel="next"$`));
  });

  it('when a name grows the most under NFKC, then its cursor still pages on', async () => {
    const longTag = `long-${uniqueId()}`;
    // U+FDFA is one code point and 18 in NFKC: the longest search key a 200-code-point name can have.
    await createAll(app, ['\uFDFA'.repeat(200), '\uFDFA'.repeat(199), 'ﬀ'.repeat(200)].map((name) => ({ id: uniqueId(), name, tag: longTag })));

    const paged = await walk(app, `/plants?tag=${longTag}&sort=-name&limit=1`);

    expect(paged.plants.map((plant) => plant.name)).toEqual(['\uFDFA'.repeat(200), '\uFDFA'.repeat(199), 'ﬀ'.repeat(200)]);
  });

  it('when sort=-id, then the Link continues after the last id, below it', async () => {
    const response = await list(`/plants?tag=${tag}&sort=-id&limit=2`);
    const last = (response.body as Listed[])[1]?.id;

    expect(response.headers.link).toBe(`</plants?limit=2&sort=-id&after=${last}&tag=${tag}>; rel="next"`);
  });
});

describe('GET /plants with Prefer: count=exact', () => {
  const tag = `count-${uniqueId()}`;
  beforeAll(() => createAll(app, ['Boston fern', 'Maidenhair fern', 'Rubber plant', 'Peace lily', 'Staghorn fern'].map((name) => ({ id: uniqueId(), name, tag }))));
  const counted = async (path: string, prefer?: string) => {
    const response = await list(path, prefer === undefined ? {} : { Prefer: prefer });
    return { total: response.headers['x-total-count'], applied: response.headers['preference-applied'], vary: response.headers.vary, count: (response.body as Listed[]).length };
  };

  it('when asked, then X-Total-Count counts every match whatever the page, with and without q', async () => {
    expect({
      tag: await counted(`/plants?tag=${tag}&limit=1`, 'count=exact'),
      search: await counted(`/plants?tag=${tag}&q=FERN&limit=2&sort=name`, 'count=exact'),
      none: await counted(`/plants?tag=${tag}&q=orchid`, 'count=exact'),
    }).toEqual({
      tag: { total: '5', applied: 'count=exact', vary: 'Prefer', count: 1 },
      search: { total: '3', applied: 'count=exact', vary: 'Prefer', count: 2 },
      none: { total: '0', applied: 'count=exact', vary: 'Prefer', count: 0 },
    });
  });

  it('when Prefer is absent or asks something else, then no count is made; among other preferences count=exact still applies', async () => {
    expect({
      absent: await counted(`/plants?tag=${tag}`),
      other: await counted(`/plants?tag=${tag}`, 'count=planned'),
      among: await counted(`/plants?tag=${tag}`, 'return=minimal, Count="exact"; x=1'),
    }).toEqual({
      absent: { total: undefined, applied: undefined, vary: 'Prefer', count: 5 },
      other: { total: undefined, applied: undefined, vary: 'Prefer', count: 5 },
      among: { total: '5', applied: 'count=exact', vary: 'Prefer', count: 5 },
    });
  });

  it('when nothing is filtered, then the count is every plant in the store', async () => {
    const all = await walk(app, '/plants?limit=1000');

    expect((await counted('/plants?limit=1', 'count=exact')).total).toBe(String(all.plants.length));
  });
});

describe('Feed-Position on GET /plants', () => {
  const fresh = perTest();

  it('when the store never had a change, then it is 0', async () => {
    const empty = await fresh.app();

    const response = await empty.request.get('/plants?sort=name&q=fern').set(bearer());

    expect({ status: response.status, position: response.headers['feed-position'], body: response.body }).toEqual({ status: 200, position: '0', body: [] });
  });

  it('when a plant was just written, then every answer carries the position of that last change, its ETag', async () => {
    const created = await postPlant(app, { id: uniqueId(), name: 'Bird of paradise' });
    const version = (created.headers.etag as string).replaceAll('"', '');

    const answers = await Promise.all(['/plants?limit=1', '/plants?sort=-updatedAt&limit=1', '/plants?q=zzz-none', '/plants?after=9223372036854775807'].map((path) => list(path)));

    expect(answers.map((response) => response.headers['feed-position'])).toEqual([version, version, version, version]);
  });
});
