import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { startTestApp, type TestApp } from '../helpers/test-app';

const run = promisify(execFile);
const CLIENT = path.resolve(__dirname, '..', '..', 'clients', 'typescript');

describe('the @plant-store/client package (dist/ built by globalSetup)', () => {
  /** An entry bundled and minified as an app's bundler would, gzipped; TanStack is the app's own, so left out. */
  async function bundled(entry: string): Promise<{ gzipped: number; inputs: string[] }> {
    const result = await build({ entryPoints: [path.join(CLIENT, 'dist', entry)], bundle: true, minify: true, format: 'esm', write: false, platform: 'browser', metafile: true, external: ['@tanstack/query-core'] });
    return { gzipped: gzipSync(result.outputFiles[0]?.contents ?? new Uint8Array(), { level: 9 }).length, inputs: Object.keys(result.metafile.inputs).map((input) => path.basename(input)) };
  }

  it('when the main entry is bundled and minified with esbuild, then it is at most 6 kB gzipped and holds nothing of the live list or the TanStack layer', async () => {
    const main = await bundled('index.js');

    expect(main.gzipped).toBeLessThanOrEqual(6 * 1024);
    expect(main.inputs.filter((input) => ['live.js', 'order.js', 'window.js', 'tanstack.js', 'tanstack-cache.js'].includes(input))).toEqual([]);
  });

  it('when the live and TanStack entries are bundled alone, then each stays within the size docs/client.md states (2.5 kB gzipped)', async () => {
    const [live, tanstack] = await Promise.all([bundled('live.js'), bundled('tanstack.js')]);

    expect({ live: live.gzipped <= 2560, tanstack: tanstack.gzipped <= 2560 }).toEqual({ live: true, tanstack: true });
    expect(tanstack.inputs).not.toContain('index.js');
  });

  it('when its built files are read, then none imports from node:', () => {
    const names = readdirSync(path.join(CLIENT, 'dist')).filter((file) => file.endsWith('.js') || file.endsWith('.d.ts'));
    const files = names.map((file) => readFileSync(path.join(CLIENT, 'dist', file), 'utf8'));

    expect(names).toEqual(expect.arrayContaining(['index.js', 'changes.js', 'wire.js', 'live.js', 'tanstack.js', 'index.d.ts', 'live.d.ts', 'tanstack.d.ts', 'openapi.d.ts']));
    expect(files.filter((text) => /from\s+['"]node:|require\(['"]node:/.test(text))).toEqual([]);
  });

  it('when a project with moduleResolution "bundler" imports it by name, then its types resolve and ids are bigint', async () => {
    const dir = mkdtempSync(path.join(CLIENT, '.consumer-'));
    try {
      writeFileSync(
        path.join(dir, 'app.ts'),
        [
          "import { createClient, newPlantId, PlantStoreError, type StoredPlant } from '@plant-store/client';",
          "import { watchPlants } from '@plant-store/client/live';",
          "import { plantQueries } from '@plant-store/client/tanstack';",
          "import { QueryClient } from '@tanstack/query-core';",
          "const client = createClient({ baseUrl: 'http://localhost:8080/api', token: async () => 'token' });",
          'const id: bigint = newPlantId();',
          'export async function show(): Promise<bigint> {',
          "  const created: { id: bigint; name: string; tag?: string } = await client.createPlant({ id, name: 'Fern' });",
          "  const found = await client.listPlants({ q: 'fern', sort: '-updatedAt', tag: 'shade', limit: 20, count: true });",
          '  const total: number | undefined = found.total;',
          '  const position: bigint = found.position;',
          "  if (found.next !== undefined) await client.listPlants({ next: found.next });",
          "  for await (const each of client.plants({ q: 'fern', sort: 'name' })) void each.createdAt;",
          '  const live = watchPlants(client, { q: \'fern\', sort: \'name\' }, { onError: () => undefined });',
          '  const stop = live.subscribe((snapshot) => void snapshot.plants.length);',
          '  await live.getSnapshot().loadMore();',
          '  stop();',
          '  live.close();',
          '  const queries = plantQueries(client);',
          "  const options = queries.list({ q: 'fern', count: true });",
          "  const key: readonly unknown[] = queries.keys.plant(created.id);",
          "  const unfollow = queries.follow(new QueryClient(), { q: 'fern' });",
          '  unfollow();',
          '  void [total, position, options.queryKey, key];',
          '  const plant = await client.getPlant(id);',
          '  const etag: string | undefined = plant.etag;',
          '  const page = await client.listPlants({ limit: 10, after: plant.id });',
          '  try { await client.deletePlant(id); } catch (error) { if (error instanceof PlantStoreError) return BigInt(error.code); }',
          "  const saved: StoredPlant = await client.updatePlant(id, { name: 'Fern', tag: null }, { ifMatch: etag });",
          '  for await (const change of client.changes({ after: 1n, tag: \'shade\', signal: AbortSignal.timeout(1000) })) {',
          "    if (change.type === 'plant.deleted') return change.id;",
          "    if (change.type === 'plant.updated' || change.type === 'plant.created') return change.plant.id + change.position;",
          '  }',
          '  return page.nextAfter ?? saved.id;',
          '}',
          // A number where the type says bigint must not compile.
          '// @ts-expect-error ids are bigint',
          "void client.getPlant(9007199254740993);",
        ].join('\n'),
      );
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true, lib: ['ES2022', 'DOM'], types: [] }, files: ['app.ts'] }),
      );

      const result = await run(process.execPath, [path.join(CLIENT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir]).then(
        () => 'compiles',
        (error: { stdout: string }) => error.stdout,
      );

      expect(result).toBe('compiles');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the client\'s generated types (clients/typescript/src/openapi.ts)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    await app.close();
  });

  it('when regenerated from the document the service serves, then the file is identical to the committed one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'client-types-'));
    try {
      const output = path.join(dir, 'openapi.ts');

      await run(process.execPath, [path.join(CLIENT, 'scripts', 'generate.mjs'), `${app.url}/openapi.json`, output]);

      expect(readFileSync(output, 'utf8')).toBe(readFileSync(path.join(CLIENT, 'src', 'openapi.ts'), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
