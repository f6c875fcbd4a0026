import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLIENT = path.resolve(__dirname, '..', '..', 'clients', 'typescript');

/** Whether npm's registry answers; under CI an unreachable one fails the suite rather than skipping it. */
function registryReachable(): boolean {
  try {
    execFileSync('npm', ['ping'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    if (process.env.CI === 'true') throw new Error('the npm registry is required in CI: the packed client is installed into a fresh Vite app from it');
    process.stdout.write('\nskipped: the packed client installed in a fresh Vite app; to run it, let npm reach its registry (npm ping)\n');
    return false;
  }
}

// What `npm create vite@latest -- --template vanilla-ts` writes, with the client used through its three entries.
const APP = {
  'index.html': '<!doctype html><html><body><ul id="plants"></ul><script type="module" src="/src/main.ts"></script></body></html>\n',
  'tsconfig.json': JSON.stringify({
    compilerOptions: { target: 'ES2022', useDefineForClassFields: true, module: 'ESNext', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: ['vite/client'], skipLibCheck: false, moduleResolution: 'bundler', allowImportingTsExtensions: true, verbatimModuleSyntax: true, moduleDetection: 'force', noEmit: true, strict: true, noUnusedLocals: true, noUnusedParameters: true },
    include: ['src'],
  }),
  'src/main.ts': [
    "import { createClient, newPlantId, PlantStoreError, type StoredPlant } from '@plant-store/client';",
    "import { watchPlants } from '@plant-store/client/live';",
    "import { plantQueries } from '@plant-store/client/tanstack';",
    "import { QueryClient, QueryObserver } from '@tanstack/query-core';",
    '',
    "const client = createClient({ baseUrl: '/api', token: () => sessionStorage.getItem('token') ?? '' });",
    "const list = document.querySelector<HTMLUListElement>('#plants');",
    "const live = watchPlants(client, { q: 'fern', sort: 'name', limit: 50 }, { onError: (error) => console.warn(error instanceof PlantStoreError ? error.code : error) });",
    'live.subscribe(({ plants, total }) => {',
    "  if (list !== null) list.textContent = `${total ?? '?'} plants: ${plants.map((plant: StoredPlant) => plant.name).join(', ')}`;",
    '});',
    'const queryClient = new QueryClient();',
    'const queries = plantQueries(client);',
    "new QueryObserver(queryClient, queries.list({ q: 'fern', count: true })).subscribe(({ data }) => console.log(data?.total, data?.position));",
    "const stop = queries.follow(queryClient, { q: 'fern' });",
    "const created: { id: bigint; name: string } = await client.createPlant({ id: newPlantId(), name: 'Fern' });",
    "const page = await client.listPlants({ q: 'fern', sort: '-createdAt', count: true });",
    'console.log(created.id, page.total, page.position, page.next);',
    'stop();',
  ].join('\n'),
};

const describeOnline = registryReachable() ? describe : describe.skip;

describeOnline('@plant-store/client packed with npm pack and installed in a fresh Vite app outside the repository', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-vite-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('when the tarball is installed with its peers, then the app type-checks and vite builds it', async () => {
    await run('npm', ['pack', '--pack-destination', dir], { cwd: CLIENT });
    const tarball = readdirSync(dir).find((file) => file.endsWith('.tgz')) as string;
    const app = path.join(dir, 'app');
    mkdirSync(path.join(app, 'src'), { recursive: true });
    for (const [file, text] of Object.entries(APP)) writeFileSync(path.join(app, file), text);
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'fresh-vite-app', private: true, type: 'module', dependencies: { '@plant-store/client': `file:../${tarball}`, '@tanstack/query-core': '^5.108.4' }, devDependencies: { typescript: '~5.9.3', vite: '^8.3.8' } }),
    );

    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, timeout: 240_000 });
    const checked = await run(process.execPath, [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app]).then(
      () => 'type-checks',
      (error: { stdout: string }) => error.stdout,
    );
    const built = await run(process.execPath, [path.join(app, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'error'], { cwd: app }).then(
      () => readdirSync(path.join(app, 'dist', 'assets')).filter((file) => file.endsWith('.js')).length,
      (error: { stderr: string }) => error.stderr,
    );

    expect({ tarball, checked, built }).toEqual({ tarball: 'plant-store-client-1.0.0.tgz', checked: 'type-checks', built: 1 });
  }, 300_000);
});
