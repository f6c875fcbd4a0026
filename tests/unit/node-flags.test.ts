import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

// `npm start` and the container start the same node with the same flags; the bench takes them from package.json.
// Only npm start reads ./.env: a container gets its variables from compose's env_file or the orchestrator.
describe('how production starts node', () => {
  it('when the container starts, then it runs node with the flags of npm start, less the .env file', () => {
    const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? '[]';

    expect(start).toBe('node --env-file-if-exists=.env --max-semi-space-size=4 --no-allocation-site-pretenuring dist/server.js');
    expect((JSON.parse(cmd) as string[]).join(' ')).toBe(start.replace(' --env-file-if-exists=.env', ''));
  });
});
