import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, tempDataDir } from '../helpers/server-process';

const ROOT = path.resolve(__dirname, '..', '..');

/** The node flags `npm start` gives, read from package.json, so this runs what the README's command runs. */
const startFlags = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--'));

describe('npm start and ./.env', () => {
  it('when the working directory has a .env, then its variables apply, and one set in the environment wins over it', async () => {
    const cwd = tempDataDir();
    writeFileSync(path.join(cwd, '.env'), 'DOCS_ENABLED=false\nLOG_LEVEL=silent\n');
    const server = await startServer({ LOG_LEVEL: 'info', DATABASE_URL: '' }, { cwd, nodeArgs: startFlags });

    const docs = await fetch(`${server.url}/docs`);
    const logged = server.lines.length;
    await server.stop();

    // DOCS_ENABLED=false from .env: /docs is no public route any more, so without a token it is a 401.
    expect(docs.status).toBe(401);
    expect(logged).toBeGreaterThan(0);
  });

  it('when the working directory has no .env, then the service starts on its defaults', async () => {
    const cwd = tempDataDir();
    const server = await startServer({ DATABASE_URL: '' }, { cwd, nodeArgs: startFlags });

    const docs = await fetch(`${server.url}/docs`);
    await server.stop();

    expect(docs.status).toBe(200);
  });
});
