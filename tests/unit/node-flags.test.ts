import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

// `npm start` and the container start the same node with the same flags; the bench takes them from package.json.
describe('how production starts node', () => {
  it('when the container starts, then it runs node with the flags of npm start', () => {
    const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? '[]';

    expect((JSON.parse(cmd) as string[]).join(' ')).toBe(start);
    expect(start).toBe('node --max-semi-space-size=4 --no-allocation-site-pretenuring dist/server.js');
  });
});
