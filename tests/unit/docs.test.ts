import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';
import { catalogue } from '../../src/errors';
import { buildOpenApiDocument } from '../../src/openapi';
import { RESOURCES } from '../../src/resources';

const root = path.resolve(__dirname, '..', '..');
const apiDoc = readFileSync(path.join(root, 'docs', 'api.md'), 'utf8');

function documentedErrorRows() {
  const table = apiDoc.split('<!-- error-codes:start -->')[1]?.split('<!-- error-codes:end -->')[0] ?? '';
  return [...table.matchAll(/^\| (\d+) \| (\d{3}) \| (\w+) \|/gm)].map(([, code, status, cause]) => ({
    code: Number(code),
    status: Number(status),
    cause,
  }));
}

const catalogueRows = Object.entries(catalogue).map(([cause, row]) => ({ code: row.code, status: row.status, cause }));

describe('the error catalogue', () => {
  it('when compared with the table in docs/api.md, then both list the same codes, statuses and causes', () => {
    expect(documentedErrorRows()).toEqual(catalogueRows);
  });

  it('when codes are listed, then each is a unique int32', () => {
    const codes = catalogueRows.map((row) => row.code);

    expect(new Set(codes).size).toBe(codes.length);
    expect(codes.every((code) => Number.isInteger(code) && code >= -(2 ** 31) && code < 2 ** 31)).toBe(true);
  });

  it('when compared with the OpenAPI document, then every code is documented under its status by the plant operations', () => {
    const paths = (buildOpenApiDocument(RESOURCES) as any).paths;
    const operations = [paths['/plants'].post, paths['/plants'].get, paths['/plants/{id}'].get, paths['/plants/{id}'].put, paths['/plants/{id}'].patch, paths['/plants/{id}'].delete, paths['/plants/events'].get, paths['/plants/batch'].post];
    const documented = operations
      .flatMap((operation) => Object.entries(operation.responses))
      .filter(([status]) => Number(status) >= 400)
      .flatMap(([status, response]: [string, any]) =>
        (response.content['application/json'].schema.allOf[1].properties.error.enum as number[]).map((code) => ({ code, status: Number(status) })),
      );
    const unique = [...new Map(documented.map((row) => [row.code, row])).values()].sort((a, b) => a.code - b.code);

    expect(unique).toEqual(catalogueRows.map(({ code, status }) => ({ code, status })).sort((a, b) => a.code - b.code));
  });

  it('when the read and delete operations are documented, then they list the parameter and not-found codes and none of the body codes', () => {
    const paths = (buildOpenApiDocument(RESOURCES) as any).paths;
    const codes = (operation: any) =>
      Object.entries(operation.responses)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(([, response]: [string, any]) => response.content['application/json'].schema.allOf[1].properties.error.enum as number[]);

    for (const operation of [paths['/plants'].get, paths['/plants/{id}'].get, paths['/plants/{id}'].delete]) {
      expect(codes(operation)).toEqual(expect.arrayContaining([40012, 40402, 40101, 40102, 42901, 50001, 50301]));
      expect(codes(operation).filter((code) => code >= 40001 && code <= 40007)).toEqual([]);
    }
    expect(codes(paths['/plants'].post)).not.toEqual(expect.arrayContaining([40012]));
  });
});

describe('.env.example', () => {
  const entries = readFileSync(path.join(root, '.env.example'), 'utf8')
    .split('\n')
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);

  it('when compared with the config schema, then it names every variable exactly once', () => {
    expect(entries.map(([name]) => name).sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('when its values are loaded, then they are the defaults', () => {
    const generate = () => 'generated';

    expect(loadConfig(Object.fromEntries(entries), generate)).toEqual(loadConfig({}, generate));
  });
});
