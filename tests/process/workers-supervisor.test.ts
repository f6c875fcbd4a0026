import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sleep } from '../helpers/common';
import { describeWith } from '../helpers/optional-services';
import { aNewPlant } from '../helpers/plants';
import { plantRows } from '../helpers/postgres';
import { startServer, tempDataDir } from '../helpers/server-process';
import { halfSentRequest, statusOf } from '../helpers/raw-request';
import { childPids, isAlive, JSON_HEADERS, onNewConnection, waitForLines, workersForEach } from '../helpers/workers';

const OLD = 'old-token-0123456789abcdefghijklmnopqrstuvwxyz';
const NEW = 'new-token-0123456789abcdefghijklmnopqrstuvwxyz';
const PRELOAD = path.resolve(__dirname, '..', 'fixtures', 'report-loaded-modules.cjs');
const digest = (token: string) => `sha256:${createHash('sha256').update(token).digest('hex')}`;

describeWith('postgres', 'the supervisor at WORKERS=2 on PostgreSQL', (server) => {
  const workers = workersForEach(server);

  it('when plants are created and read on new connections, then both workers answer, each line names its worker and every plant reads back', async () => {
    const service = await workers.start();
    const plants = Array.from({ length: 12 }, () => aNewPlant());

    const created = await Promise.all(plants.map((plant) => onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(plant) })));
    const read = await Promise.all(plants.map((plant) => onNewConnection(service.url, { method: 'GET', path: `/plants/${String(plant.id)}`, headers: JSON_HEADERS })));
    const health = await Promise.all(['/healthz', '/readyz', '/healthz', '/readyz'].map((route) => onNewConnection(service.url, { method: 'GET', path: route })));
    await sleep(300);
    const served = service.lines.filter((line) => line.msg === 'request' && line.method === 'POST');

    expect(created.map((response) => response.status)).toEqual(Array(12).fill(200));
    expect(read.map((response) => [response.status, (response.body as { name: string }).name])).toEqual(plants.map((plant) => [200, plant.name]));
    expect(health.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(served.map((line) => line.worker))).toEqual(new Set([1, 2]));
    expect(plantRows(workers.url).map((row) => row.name).sort()).toEqual(plants.map((plant) => String(plant.name)).sort());
    expect(service.lines.find((line) => line.msg === 'listening')).toMatchObject({ workers: 2, maxConnections: expect.any(Number) });
    expect(service.lines.filter((line) => line.msg === 'worker listening').map((line) => line.worker).sort()).toEqual([1, 2]);
  });

  it('when SIGTERM arrives with requests in flight on both workers, then each completes with 200, every worker stops and the supervisor exits 0', async () => {
    const service = await workers.start();
    const inFlight = Array.from({ length: 8 }, () => halfSentRequest(service.url, JSON.stringify(aNewPlant())));
    await sleep(300);

    service.child.kill('SIGTERM');
    await service.waitForLine((line) => line.msg === 'shutting down: draining every worker');
    const responses = await Promise.all(inFlight.map((request) => request.finish()));
    const exit = await service.exited;

    expect(responses.map(statusOf)).toEqual(Array(8).fill(200));
    expect(exit).toEqual({ code: 0, signal: null });
    expect(service.lines.filter((line) => line.msg === 'stopped').map((line) => [line.worker, line.code]).sort()).toEqual([[undefined, 0], [1, 0], [2, 0]]);
    expect(service.lines.at(-1)).toEqual(expect.objectContaining({ msg: 'stopped', code: 0 }));
    expect(service.lines.at(-1)).not.toHaveProperty('worker');
  });

  it('when a request outlives SHUTDOWN_TIMEOUT_MS on one worker, then the supervisor exits 1, the worst of its workers', async () => {
    const service = await workers.start({ SHUTDOWN_TIMEOUT_MS: '300' });
    const stuck = halfSentRequest(service.url, JSON.stringify(aNewPlant()));
    await sleep(300);

    const exit = await service.stop('SIGTERM');
    void stuck;

    expect(exit).toEqual({ code: 1, signal: null });
    expect(service.lines.filter((line) => line.msg === 'stopped' && line.code === 1).map((line) => line.worker)).toEqual([expect.any(Number), undefined]);
    expect(service.lines.at(-1)).toEqual(expect.objectContaining({ msg: 'stopped', code: 1 }));
  });

  it('when the token file changes and the supervisor gets SIGHUP, then every worker reloads it: the new token works on both, the removed one on neither', async () => {
    const file = path.join(tempDataDir(), 'tokens');
    writeFileSync(file, `${digest(OLD)}\n`);
    const service = await workers.start({ AUTH_TOKENS: '', AUTH_TOKENS_FILE: file, NODE_ENV: 'production' });
    const create = (token: string) => onNewConnection(service.url, { headers: { ...JSON_HEADERS, Authorization: `Bearer ${token}` }, body: JSON.stringify(aNewPlant()) }).then((response) => response.status);
    const before = await Promise.all([OLD, OLD, NEW, NEW].map(create));

    writeFileSync(`${file}.new`, `${digest(NEW)}\n`);
    renameSync(`${file}.new`, file);
    service.child.kill('SIGHUP');
    await waitForLines(service, (line) => line.msg === 'static tokens reloaded' && line.trigger === 'SIGHUP', 2);
    const after = await Promise.all([NEW, NEW, NEW, NEW, OLD, OLD, OLD, OLD].map(create));
    await sleep(300);
    const reloaded = service.lines.filter((line) => line.msg === 'static tokens reloaded' && line.trigger === 'SIGHUP');
    const newServedBy = service.lines.filter((line) => line.msg === 'request' && line.status === 200 && line.caller !== undefined).map((line) => line.worker);

    expect(before).toEqual([200, 200, 401, 401]);
    expect(after).toEqual([200, 200, 200, 200, 401, 401, 401, 401]);
    expect(reloaded.map((line) => line.worker).sort()).toEqual([1, 2]);
    expect(service.lines.find((line) => line.msg === 'SIGHUP: forwarded to every worker')).toMatchObject({ workers: 2 });
    expect(new Set(newServedBy)).toEqual(new Set([1, 2]));
  });

  it('when no token source is set, then the supervisor logs the one token generated at start once and both workers accept it', async () => {
    const service = await workers.start({ AUTH_TOKENS: '' });
    const generated = service.lines.filter((line) => typeof line.token === 'string');
    const token = String(generated[0]?.token);

    const read = await Promise.all(Array.from({ length: 6 }, () => onNewConnection(service.url, { method: 'GET', path: '/plants/1', headers: { Authorization: `Bearer ${token}` } })));
    await sleep(300);
    const servedBy = new Set(service.lines.filter((line) => line.msg === 'request' && line.path === '/plants/1').map((line) => line.worker));

    // Said once, as one process says it: by the supervisor, which generated it for every worker.
    expect(generated.map((line) => [line.worker, line.token])).toEqual([[undefined, token]]);
    expect(read.map((response) => response.status)).toEqual(Array(6).fill(404));
    expect(servedBy).toEqual(new Set([1, 2]));
  });

  it('when the service serves, then the supervisor itself has loaded neither the service, express nor pg', async () => {
    const file = path.join(tempDataDir(), 'modules.json');
    const service = await startServer({ WORKERS: '2', DATABASE_URL: workers.url, LOADED_MODULES_FILE: file }, { nodeArgs: ['--require', PRELOAD] });
    await waitForLines(service, (line) => line.msg === 'database ready', 2);
    await onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(aNewPlant()) });

    service.child.kill('SIGUSR2');
    const deadline = Date.now() + 5000;
    while (!existsSync(file) && Date.now() < deadline) await sleep(20);
    await service.stop();
    const modules = JSON.parse(readFileSync(file, 'utf8')) as string[];
    const loaded = (pattern: RegExp) => modules.some((module) => pattern.test(module));

    expect({
      supervisor: loaded(/dist\/supervisor\/primary\.js$/),
      service: loaded(/dist\/service\.js$/),
      express: loaded(/node_modules\/express\//),
      pg: loaded(/node_modules\/pg\//),
    }).toEqual({ supervisor: true, service: false, express: false, pg: false });
  });

  it('when the supervisor is killed with SIGKILL, then its workers drain and exit on their own', async () => {
    const service = await workers.start();
    const pids = childPids(service.child.pid ?? 0);

    service.child.kill('SIGKILL');
    await service.exited;
    const deadline = Date.now() + 10_000;
    while (pids.some(isAlive) && Date.now() < deadline) await sleep(100);

    expect(pids).toHaveLength(2);
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it('when the port is taken, then the start fails at once with exit 1 and one line naming the worker that failed', async () => {
    const first = await workers.start();
    const { port } = new URL(first.url);
    const started = Date.now();

    const second = await startServer({ WORKERS: '2', DATABASE_URL: workers.url, PORT: port }, { expectListening: false });
    const exit = await second.exited;

    expect(exit).toEqual({ code: 1, signal: null });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(second.lines.filter((line) => line.msg === 'worker failed to start; stopping the others')).toEqual([expect.objectContaining({ level: 60, worker: expect.any(Number), code: 1 })]);
    expect(second.lines.some((line) => typeof line.msg === 'string' && line.msg.includes('EADDRINUSE'))).toBe(true);
  });
});
