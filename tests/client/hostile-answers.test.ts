import { createClient, PlantStoreError } from '../../clients/typescript/src/index';
import { drain, hostileServer, json, settle, type HostileServer } from './hostile-server';

const TOKEN = 'secret-token';

/** The parts of an error a user sees: a PlantStoreError's status, code and message, or what else it was. */
const shown = (error: unknown) =>
  error instanceof PlantStoreError ? { type: 'PlantStoreError', status: error.status, code: error.code, message: error.message } : { type: String((error as Error | undefined)?.name), message: String((error as Error | undefined)?.message ?? error) };

describe('the TypeScript client against a server whose Link leads elsewhere', () => {
  let other: HostileServer;
  let servers: HostileServer[] = [];

  beforeEach(async () => {
    other = await hostileServer((_req, res) => json(res, '[{"id":2,"name":"elsewhere"}]'));
    servers = [other];
  });

  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  it.each([
    ['absolute', (origin: string) => `${origin}/plants?limit=1&after=1`],
    ['scheme-relative', (origin: string) => `${origin.replace('http:', '')}/plants?limit=1&after=1`],
  ])('when the next link is %s to another origin, then the other origin sees no request and the iteration throws naming it', async (_kind, link) => {
    const home = await hostileServer((_req, res) => json(res, '[{"id":1,"name":"home"}]', { Link: `<${link(other.origin)}>; rel="next"` }));
    servers.push(home);
    const client = createClient({ baseUrl: home.origin, token: TOKEN });

    const { items, error } = await drain(client.plants({ pageSize: 1 }));

    expect(items).toEqual([{ id: 1n, name: 'home' }]);
    expect(shown(error)).toEqual({ type: 'PlantStoreError', status: 200, code: 0, message: expect.stringContaining(other.origin) as string });
    expect(other.seen).toEqual([]);
    expect(home.seen.map((request) => request.authorization)).toEqual([`Bearer ${TOKEN}`]);
  });

  it('when a plant answer redirects to another origin, then getPlant throws a PlantStoreError naming it and follows nothing', async () => {
    const home = await hostileServer((req, res) => {
      res.writeHead(302, { Location: `${other.origin}${req.url}` });
      res.end();
    });
    servers.push(home);
    const client = createClient({ baseUrl: home.origin, token: TOKEN });

    const error = await settle(client.getPlant(1n));

    expect(shown(error)).toEqual({ type: 'PlantStoreError', status: 302, code: 0, message: expect.stringContaining(`${other.origin}/plants/1`) as string });
    expect(other.seen).toEqual([]);
  });
});

describe('the TypeScript client against a server whose Link does not advance', () => {
  let server: HostileServer | undefined;

  afterEach(async () => {
    await server?.close();
  });

  it.each([
    ['the first page again', () => '/plants?limit=1'],
    ['the page just fetched', () => '/plants?limit=1&after=1'],
    ['an after before the last one', (after: number) => `/plants?limit=1&after=${after - 1}`],
  ])('when the next link points to %s, then the iteration throws after at most three requests', async (_kind, link) => {
    server = await hostileServer((req, res) => {
      const after = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('after') ?? 0);
      json(res, `[{"id":${after + 1},"name":"again"}]`, { Link: `<${after === 0 ? '/plants?limit=1&after=1' : link(after)}>; rel="next"` });
    });
    const client = createClient({ baseUrl: server.origin, token: TOKEN });

    const { error } = await drain(client.plants({ pageSize: 1 }));

    expect(shown(error)).toEqual({ type: 'PlantStoreError', status: 200, code: 0, message: expect.stringMatching(/does not advance/) as string });
    expect(server.seen.length).toBeLessThanOrEqual(3);
  });

  it.each([
    ['a cursor page linking to its own cursor', 'name', (url: URL) => `/plants?limit=1&sort=name&cursor=${url.searchParams.get('cursor') ?? 'c1'}`],
    ['a -id page linking to a higher after', '-id', (url: URL) => `/plants?limit=1&sort=-id&after=${Number(url.searchParams.get('after') ?? 100) + 1}`],
  ])('when %s, then the iteration throws after at most two requests', async (_kind, sort, link) => {
    server = await hostileServer((req, res) => json(res, '[{"id":7,"name":"again"}]', { Link: `<${link(new URL(req.url ?? '/', 'http://x'))}>; rel="next"` }));
    const client = createClient({ baseUrl: server.origin, token: TOKEN });

    const { error } = await drain(client.plants({ pageSize: 1, sort: sort as 'name' | '-id' }));

    expect(shown(error)).toEqual({ type: 'PlantStoreError', status: 200, code: 0, message: expect.stringMatching(/does not advance/) as string });
    expect(server.seen.length).toBeLessThanOrEqual(2);
  });
});

describe('the TypeScript client against a server that sends ids it cannot hold exactly', () => {
  let server: HostileServer | undefined;
  let body = '';

  beforeAll(async () => {
    server = await hostileServer((req, res) => {
      const list = new URL(req.url ?? '/', 'http://x').pathname === '/plants';
      json(res, list ? `[${body}]` : body);
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  const BAD = ['1e400', '12e3', '1.5', '1.0', '9223372036854775808', '-9223372036854775809', '-0', '+5', '007', '"5"', 'null', '1E2'];

  it.each(BAD)('when a plant answer has id %s, then getPlant, updatePlant and listPlants throw a PlantStoreError', async (id) => {
    body = `{"id":${id},"name":"Wrong"}`;
    const client = createClient({ baseUrl: server?.origin ?? '', token: TOKEN });

    const errors = await Promise.all([settle(client.getPlant(1n)), settle(client.updatePlant(1n, { name: 'Wrong' })), settle(client.listPlants())]);

    expect(errors.map((error) => shown(error))).toEqual(Array(3).fill({ type: 'PlantStoreError', status: 200, code: 0, message: expect.any(String) as string }));
  });

  it.each(['-9223372036854775808', '9223372036854775807', '0'])('when a plant answer has id %s (inside int64), then it is that exact bigint', async (id) => {
    body = `{"id":${id},"name":"Edge"}`;
    const client = createClient({ baseUrl: server?.origin ?? '', token: TOKEN });

    expect(await client.getPlant(1n)).toEqual({ id: BigInt(id), name: 'Edge' });
  });

  it.each(['12e3', '1.5', '9223372036854775808', ''])('when the next link has after=%s, then listPlants throws a PlantStoreError', async (after) => {
    const link = await hostileServer((_req, res) => json(res, '[{"id":1,"name":"a"}]', { Link: `</plants?limit=1&after=${after}>; rel="next"` }));
    const client = createClient({ baseUrl: link.origin, token: TOKEN });

    const error = await settle(client.listPlants({ limit: 1 }));
    await link.close();

    expect(shown(error)).toMatchObject({ type: 'PlantStoreError', status: 200, code: 0 });
  });
});

describe('the TypeScript client against a server whose answer is huge', () => {
  it('when a plant answer streams 100 MB, then getPlant throws a PlantStoreError and stops reading well before the end', async () => {
    let written = 0;
    const server = await hostileServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"id":1,"name":"');
      const chunk = 'a'.repeat(64 * 1024);
      const more = () => {
        while (written < 100 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end('"}');
      };
      res.on('close', () => res.removeAllListeners('drain'));
      more();
    });
    const client = createClient({ baseUrl: server.origin, token: TOKEN });

    const error = await settle(client.getPlant(1n));
    await server.close();

    expect(shown(error)).toEqual({ type: 'PlantStoreError', status: 200, code: 0, message: expect.stringMatching(/larger than 8388608 bytes/) as string });
    expect(written).toBeLessThan(50 * 1024 * 1024);
  });

  it('when a plant answer says Content-Length 100 MB, then getPlant throws before reading it', async () => {
    const server = await hostileServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(100 * 1024 * 1024) });
      res.write('{"id":1,');
    });
    const client = createClient({ baseUrl: server.origin, token: TOKEN });

    const error = await settle(client.getPlant(1n));
    await server.close();

    expect(shown(error)).toEqual({ type: 'PlantStoreError', status: 200, code: 0, message: expect.stringMatching(/larger than 8388608 bytes/) as string });
  });
});

describe('the TypeScript client against a server that asks to be retried in 31 years', () => {
  it('when getPlant meets 503 with Retry-After: 1000000000, then it throws at once and retryAfterMs says five minutes', async () => {
    const server = await hostileServer((_req, res) => json(res, '{"error":50301,"message":"busy"}', { 'Retry-After': '1000000000' }, 503));
    const client = createClient({ baseUrl: server.origin, token: TOKEN });

    const error = await settle(client.getPlant(1n));
    await server.close();

    expect({ ...shown(error), retryAfterMs: (error as PlantStoreError).retryAfterMs, requests: server.seen.length }).toEqual({
      type: 'PlantStoreError',
      status: 503,
      code: 50301,
      message: 'busy',
      retryAfterMs: 300_000,
      requests: 1,
    });
  });
});
