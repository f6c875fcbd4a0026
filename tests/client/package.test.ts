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
  it('when bundled and minified with esbuild, then it is at most 5 kB gzipped', async () => {
    const result = await build({ entryPoints: [path.join(CLIENT, 'dist', 'index.js')], bundle: true, minify: true, format: 'esm', write: false, platform: 'browser' });

    const gzipped = gzipSync(result.outputFiles[0]?.contents ?? new Uint8Array(), { level: 9 }).length;

    expect(gzipped).toBeLessThanOrEqual(5 * 1024);
  });

  it('when its built files are read, then none imports from node:', () => {
    const names = readdirSync(path.join(CLIENT, 'dist')).filter((file) => file.endsWith('.js') || file.endsWith('.d.ts'));
    const files = names.map((file) => readFileSync(path.join(CLIENT, 'dist', file), 'utf8'));

    expect(names).toEqual(expect.arrayContaining(['index.js', 'changes.js', 'wire.js', 'index.d.ts', 'openapi.d.ts']));
    expect(files.filter((text) => /from\s+['"]node:|require\(['"]node:/.test(text))).toEqual([]);
  });

  it('when a project with moduleResolution "bundler" imports it by name, then its types resolve and ids are bigint', async () => {
    const dir = mkdtempSync(path.join(CLIENT, '.consumer-'));
    try {
      writeFileSync(
        path.join(dir, 'app.ts'),
        [
          "import { createClient, newPlantId, PlantStoreError, type StoredPlant } from '@plant-store/client';",
          "const client = createClient({ baseUrl: 'http://localhost:8080/api', token: async () => 'token' });",
          'const id: bigint = newPlantId();',
          'export async function show(): Promise<bigint> {',
          "  await client.createPlant({ id, name: 'Fern' });",
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
