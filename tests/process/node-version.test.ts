import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { tempDataDir } from '../helpers/server-process';
import { perProcess } from '../helpers/test-workers';

const ROOT = path.resolve(__dirname, '..', '..');

/** A node older than 24 on this machine outside the project (the system's), or undefined. */
function olderNode(): { path: string; version: string } | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const [version = '', execPath = ''] = execFileSync(candidate, ['-p', 'process.version + " " + process.execPath'], { encoding: 'utf8' })
        .trim()
        .split(' ');
      if (Number(/^v(\d+)/.exec(version)?.[1]) < 24) return { path: execPath, version };
    } catch {
      // not there
    }
  }
  return undefined;
}

const old = olderNode();
// The check runs before WORKERS is read: once is enough.
const describeOld = old === undefined ? describe.skip : perProcess('the Node check runs before the configuration is read, in whichever process starts').describe;

describeOld(`dist/ started by an older node (${old?.path ?? 'none on this machine'} ${old?.version ?? ''})`, () => {
  it.each([
    ['the server', ['dist/server.js']],
    ['plant-store', ['dist/cli/plant-store.js', 'export']],
  ])('when %s is started with it, then it exits 1 with one line naming the Node it needs, before the driver loads', (_name, args) => {
    // A store that exists, so plant-store's export reaches the driver too.
    const store = path.join(tempDataDir(), 'plants.db');
    new Database(store).close();

    const run = spawnSync(old!.path, args, {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 10_000,
      env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', DATABASE_URL: `file:${store}` },
    });

    expect({ status: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 1,
      signal: null,
      stdout: '',
      stderr: `plant-store: needs Node 24 or newer, and ${old!.path} is ${old!.version}; run it through npm (npm start, npm run plant-store), which uses the Node the project pins, or see docs/development.md\n`,
    });
  });
});
