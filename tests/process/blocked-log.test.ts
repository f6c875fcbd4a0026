import { closeSync, createReadStream } from 'node:fs';
import http from 'node:http';
import { sleep } from '../helpers/common';
import { aNewPlant } from '../helpers/plants';
import { startServerOnFifo } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

/** The built server with stdout on a FIFO that nobody reads (opened read-write here so the open does not wait). */
async function startWithBlockedStdout(env: Record<string, string>) {
  const { child, fifo, fd, port } = await startServerOnFifo(env);
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: performance.now() })));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const get = (requestPath: string) =>
    new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: requestPath, agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      }).on('error', reject);
    });
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if ((await get('/healthz').catch(() => 0)) === 200) break;
    await sleep(50);
  }
  const post = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        { host: '127.0.0.1', port, path: '/plants', method: 'POST', agent, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' } },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  return {
    child,
    fifo,
    exited,
    post,
    close: () => {
      agent.destroy();
      closeSync(fd);
    },
  };
}

describe('a log destination nobody reads', () => {
  it('when stdout is blocked, then requests still answer, lines past LOG_BUFFER_LIMIT are dropped, and the count is logged once it drains', async () => {
    const server = await startWithBlockedStdout({ LOG_BUFFER_LIMIT: '32kb' });

    const statuses: number[] = [];
    for (let round = 0; round < 40; round += 1) {
      statuses.push(...(await Promise.all(Array.from({ length: 25 }, () => server.post(JSON.stringify(aNewPlant()))))));
    }
    const reader = createReadStream(server.fifo, { encoding: 'utf8' });
    let text = '';
    reader.on('data', (chunk) => {
      text += chunk as string;
    });
    await server.post(JSON.stringify(aNewPlant()));
    const parsed = () => text.split('\n').filter((line) => line.startsWith('{') && line.endsWith('}')).map((line) => JSON.parse(line) as Record<string, unknown>);
    // Drops may come in several episodes (the reader drains, the buffer fills again): each is reported once.
    const reports = () => parsed().filter((line) => line.msg === 'log destination was blocked: dropped lines past the log buffer');
    const accounted = () => parsed().filter((line) => line.msg === 'request').length + reports().reduce((sum, line) => sum + Number(line.dropped), 0);
    const deadline = performance.now() + 10_000;
    while (accounted() < 1001 && performance.now() < deadline) await sleep(100);
    server.child.kill('SIGTERM');
    await server.exited;
    reader.destroy();
    server.close();

    expect(statuses).toEqual(Array(1000).fill(200));
    const requestLines = parsed().filter((line) => line.msg === 'request').length;
    expect(reports().length).toBeGreaterThan(0);
    expect(reports().every((line) => line.level === 40 && typeof line.dropped === 'number' && line.dropped > 0)).toBe(true);
    // Everything is accounted for: each of the 1,001 requests was either written or counted as dropped.
    expect(accounted()).toBeGreaterThanOrEqual(1001);
    expect(requestLines).toBeLessThan(1001);
  });

  it('when stdout is blocked at SIGTERM, then the process still exits 0 within SHUTDOWN_TIMEOUT_MS', async () => {
    const server = await startWithBlockedStdout({ SHUTDOWN_TIMEOUT_MS: '3000' });
    for (let round = 0; round < 20; round += 1) {
      await Promise.all(Array.from({ length: 25 }, () => server.post(JSON.stringify(aNewPlant()))));
    }

    const signalled = performance.now();
    server.child.kill('SIGTERM');
    const exit = await Promise.race([server.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 6000).unref())]);
    if (exit === undefined) server.child.kill('SIGKILL');
    server.close();

    expect(exit?.code).toBe(0);
    expect((exit?.at ?? Number.POSITIVE_INFINITY) - signalled).toBeLessThan(3000);
  });
});
