import { aNewPlant } from '../helpers/plants';
import { appForAll, identityProviderForAll } from '../helpers/fixtures';
import { tokenFileForAll } from '../helpers/token-file';
import { bearer, startTestApp, storedPlant, type TestApp } from '../helpers/test-app';

const ALICE = 'alice-token-0123456789abcdefghijklmnopqrstuvwxyz';
const READER = 'reader-token-0123456789abcdefghijklmnopqrstuvwxyz';
const ADMIN = 'admin-token-0123456789abcdefghijklmnopqrstuvwxyz';
const READ_ADMIN = 'read-admin-token-0123456789abcdefghijklmnopqrstuvwxyz';
const json = { 'Content-Type': 'application/json' };
const INVALID_CHALLENGE = 'Bearer realm="plants", error="invalid_token"';
const ADMIN_CHALLENGE = 'Bearer realm="plants", error="insufficient_scope", scope="plants:admin"';
const BAD_HEADER = 'Act-As-Tenant: must be a tenant\'s name, 1 to 255 characters, percent-encoded as UTF-8 (visible ASCII only, a space as %20).';

const idp = identityProviderForAll();
const tokens = tokenFileForAll({
  [ALICE]: 'tenant=alice',
  [READER]: 'plants:read tenant=bob',
  [ADMIN]: 'plants:read plants:write plants:admin tenant=ops',
  [READ_ADMIN]: 'plants:read plants:admin tenant=ops',
});
const app = appForAll(() => ({ ...idp.env(), AUTH_TOKENS: '', AUTH_TOKENS_FILE: tokens, TENANT_CLAIM: 'org_id', TENANT_DEFAULT: 'alice', CORS_ORIGINS: 'https://app.example.com' }));

const post = (target: TestApp, token: string, headers: Record<string, string> = {}) =>
  target.request.post('/plants').set({ ...json, Authorization: `Bearer ${token}`, ...headers }).send(JSON.stringify(aNewPlant()));

const outcome = (response: { status: number; headers: Record<string, string>; body: unknown }) => ({
  status: response.status,
  challenge: response.headers['www-authenticate'],
  body: response.body,
});

const logLineOf = (target: TestApp, response: { headers: Record<string, string> }) => target.logs.find((line) => line.msg === 'request' && line.reqId === response.headers['x-request-id']);

describe('the tenant claim of a JWT (TENANT_CLAIM=org_id)', () => {
  it('when the claim names a tenant, then the request is served', async () => {
    const response = await post(app, await idp.mint({ org_id: 'acme' }));

    expect(response.status).toBe(200);
  });

  it.each([
    ['is missing', {}],
    ['is empty', { org_id: '' }],
    ['is a number', { org_id: 42 }],
    ['is an array', { org_id: ['acme'] }],
    ['is 256 characters', { org_id: 'o'.repeat(256) }],
  ])('when the claim %s, then it answers 401 40104 naming the claim', async (_case, claims) => {
    const response = await post(app, await idp.mint(claims));

    expect(outcome(response)).toEqual({
      status: 401,
      challenge: INVALID_CHALLENGE,
      body: { error: 40104, message: 'The access token\'s "org_id" claim (TENANT_CLAIM) must name its tenant: a non-empty string of at most 255 characters.' },
    });
  });

  it('when the claim is 255 characters, then the request is served', async () => {
    const response = await post(app, await idp.mint({ org_id: 'o'.repeat(255) }));

    expect(response.status).toBe(200);
  });

  it('when a JWT grants plants:admin by name, then it may act in another tenant', async () => {
    const token = await idp.mint({ org_id: 'acme', scope: 'plants:read plants:admin' });

    const response = await app.request.get('/plants').set({ Authorization: `Bearer ${token}`, 'Act-As-Tenant': 'globex' });

    expect(response.status).toBe(200);
    expect(logLineOf(app, response)).toMatchObject({ status: 200, caller: 'sub:user-1', tenant: 'globex' });
  });
});

describe('Act-As-Tenant', () => {
  it('when an admin names a tenant, then the request is served and its log line names the tenant acted in', async () => {
    const response = await post(app, ADMIN, { 'Act-As-Tenant': 'Acme%20Corp%20%C3%BC' });

    expect(response.status).toBe(200);
    expect(logLineOf(app, response)).toMatchObject({ status: 200, tenant: 'Acme Corp ü' });
  });

  it('when a request is made in the caller\'s own tenant, then its log line names no tenant', async () => {
    const responses = [await post(app, ALICE), await post(app, ADMIN)];

    expect(responses.map((response) => [response.status, 'tenant' in (logLineOf(app, response) ?? {})])).toEqual([
      [200, false],
      [200, false],
    ]);
  });

  it.each([['bob'], ['%zz'], ['']])('when a caller without plants:admin sends %p, then it answers 403 40302', async (value) => {
    const response = await app.request.get('/plants').set({ Authorization: `Bearer ${READER}`, 'Act-As-Tenant': value });

    expect(outcome(response)).toEqual({
      status: 403,
      challenge: ADMIN_CHALLENGE,
      body: { error: 40302, message: 'Act-As-Tenant: acting in another tenant needs the plants:admin scope, which this token lacks.' },
    });
    expect(logLineOf(app, response)).toMatchObject({ status: 403, error: 40302 });
    expect(logLineOf(app, response)).not.toHaveProperty('tenant');
  });

  it.each([
    ['empty', ''],
    ['malformed percent-encoding', '%zz'],
    ['a lone UTF-8 lead byte', 'acme%C3'],
    ['a raw space', 'Acme Corp'],
    ['a raw non-ASCII letter', 'Ã¼'],
    ['256 characters decoded', 'x'.repeat(256)],
  ])('when an admin sends a value that is %s, then it answers 400 40061 naming the header', async (_case, value) => {
    const response = await app.request.get('/plants').set({ Authorization: `Bearer ${ADMIN}`, 'Act-As-Tenant': value });

    expect(outcome(response)).toEqual({ status: 400, challenge: undefined, body: { error: 40061, message: BAD_HEADER } });
  });

  it('when an admin sends 255 characters, percent-encoded to more, then the request is served', async () => {
    const response = await app.request.get('/plants').set({ Authorization: `Bearer ${ADMIN}`, 'Act-As-Tenant': '%C3%BC'.repeat(255) });

    expect(response.status).toBe(200);
  });

  it('when an admin without plants:write acts in a tenant with a write, then the method\'s own scope is still required (403 40301)', async () => {
    const response = await post(app, READ_ADMIN, { 'Act-As-Tenant': 'acme' });

    expect(outcome(response)).toMatchObject({ status: 403, body: { error: 40301 } });
  });

  it('when the header comes without credentials, then it answers 401 first', async () => {
    const response = await app.request.get('/plants').set({ 'Act-As-Tenant': 'acme' });

    expect(response.status).toBe(401);
  });

  it('when a listed origin preflights it, then browsers may send the header', async () => {
    const response = await app.request
      .options('/plants')
      .set({ Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization,act-as-tenant' });

    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-headers']).toContain('Act-As-Tenant');
  });
});

describe('Act-As-Tenant with tenants off', () => {
  const off = appForAll();

  it('when it is sent, then it answers 400 40060 and nothing is written', async () => {
    const plant = aNewPlant();

    const response = await off.request.post('/plants').set({ ...json, ...bearer(), 'Act-As-Tenant': 'acme' }).send(JSON.stringify(plant));

    expect(outcome(response)).toEqual({
      status: 400,
      challenge: undefined,
      body: { error: 40060, message: 'Act-As-Tenant: this service keeps no tenants (TENANT_CLAIM is unset); send the request without it.' },
    });
    expect(storedPlant(off, plant.id as number)).toBeUndefined();
  });
});

describe('the start with tenants on', () => {
  const unnamed = tokenFileForAll({ [ALICE]: 'tenant=alice', [READER]: 'plants:read' });

  it.each([
    ['AUTH_TOKENS is set', {}, 'AUTH_TOKENS: a token there cannot name a tenant, and TENANT_CLAIM is set; put each in AUTH_TOKENS_FILE with tenant=<name> (npm run token -- tenant=<name>)'],
    ['a token line names no tenant', { AUTH_TOKENS: '', AUTH_TOKENS_FILE: unnamed }, 'AUTH_TOKENS_FILE line 2: names no tenant; add tenant=<name>'],
  ])('when %s, then the service refuses to start naming what to fix', async (_case, env, message) => {
    await expect(startTestApp({ TENANT_CLAIM: 'sub', ...env })).rejects.toThrow(message);
  });
});

describe('the OpenAPI document', () => {
  it('when read, then every plant operation takes Act-As-Tenant and lists the tenant codes under their statuses', async () => {
    const { paths } = (await app.request.get('/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    const codesOf = (operation: any, status: string): number[] => (operation.responses[status]?.content['application/json'].schema.allOf[1].properties.error.enum as number[] | undefined) ?? [];

    const plantPaths = Object.entries(paths).filter(([name]) => name.startsWith('/plants')).map(([, path]) => path);

    const operations = plantPaths.flatMap((path) =>
      Object.entries(path)
        .filter(([method]) => method !== 'parameters')
        .map(([method, operation]) => ({
          operation: `${method} ${operation.operationId}`,
          header: [...(path.parameters ?? []), ...(operation.parameters ?? [])].some((parameter: any) => parameter.name === 'Act-As-Tenant' && parameter.in === 'header'),
          codes: [...codesOf(operation, '400'), ...codesOf(operation, '401'), ...codesOf(operation, '403'), ...codesOf(operation, '429')].filter((code) => [40060, 40061, 40104, 40302, 42902].includes(code)).sort(),
        })),
    );

    expect(operations).toHaveLength(8);
    for (const each of operations) expect(each).toEqual({ operation: each.operation, header: true, codes: [40060, 40061, 40104, 40302, 42902] });
  });
});
