import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { optionalService } from './optional-services';
import { freePort } from './ports';

/** True when nginx is on the PATH; under CI a missing nginx throws instead (tests/helpers/optional-services.ts). */
export function nginxAvailable(): boolean {
  return optionalService('nginx') !== undefined;
}

/**
 * Runs nginx with the project's own docker/nginx.conf, pointed at 127.0.0.1:upstreamPort instead of the compose
 * service, in the foreground as one process (no daemon, no workers) with its files in a temp directory. `url`
 * is where the service is mounted (`/api`), `origin` the proxy itself, which serves `webRoot` (the example app) at /.
 * `/idp/` goes to the demo identity provider on 127.0.0.1:idpPort (tests/helpers/oidc-idp.ts); without one, to
 * port 9 on loopback, where nothing listens (nginx resolves every upstream's name at start, so `plants` cannot stay).
 * `port`: the proxy's own, chosen beforehand when the provider's issuer must name the origin before either starts.
 */
export async function startNginx(
  upstreamPort: number,
  replacements: readonly (readonly [string, string])[] = [],
  webRoot = path.resolve(__dirname, '..', '..', 'examples', 'web', 'dist'),
  { idpPort = 9, port }: { idpPort?: number; port?: number } = {},
): Promise<{ url: string; origin: string; stop: () => Promise<void> }> {
  const proxy = await runNginx('nginx.conf', (site) =>
    replacements.reduce(
      (text, [from, to]) => text.replace(from, to),
      site
        .replace('server plants:3000;', `server 127.0.0.1:${upstreamPort};`)
        .replace('server plants:3001;', `server 127.0.0.1:${idpPort};`)
        .replace('root /usr/share/plant-store/web;', `root ${webRoot};`),
    ),
    port,
  );
  return { ...proxy, url: `${proxy.url}/api`, origin: proxy.url };
}

/** docker/nginx.replicas.conf, its two upstreams pointed at two local replicas. */
export async function startNginxReplicas(upstreamPorts: [number, number]): Promise<{ url: string; stop: () => Promise<void> }> {
  return runNginx('nginx.replicas.conf', (site) =>
    site.replace('server plants-1:3000', `server 127.0.0.1:${upstreamPorts[0]}`).replace('server plants-2:3000', `server 127.0.0.1:${upstreamPorts[1]}`),
  );
}

/** `port`: one chosen beforehand (freePort), when another process must know the proxy's origin before it starts. */
async function runNginx(file: string, pointUpstream: (site: string) => string, chosenPort?: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-nginx-'));
  const port = chosenPort ?? (await freePort());
  const site = pointUpstream(readFileSync(path.resolve(__dirname, '..', '..', 'docker', file), 'utf8')).replace('listen 8080;', `listen 127.0.0.1:${port};`);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `${kind}_temp_path ${dir}/${kind};`).join('\n  ');
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\nevents {}\nhttp {\n  access_log off;\n  ${temp}\n${site}\n}\n`,
  );
  const child: ChildProcess = spawn('nginx', ['-p', dir, '-e', `${dir}/error.log`, '-c', conf, '-g', 'daemon off; master_process off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr} ${readFileSync(`${dir}/error.log`, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
