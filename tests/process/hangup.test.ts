import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sleep } from '../helpers/common';
import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { perProcess } from '../helpers/test-workers';

const NOTHING_TO_RELOAD = 'SIGHUP: nothing to reload now (only AUTH_TOKENS_FILE is, while serving); carrying on';

const create = (server: ServerProcess) =>
  rawRequest(server.url, {
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(aNewPlant()),
  }).then((response) => response.status);

/** True once the process catches SIGHUP (bit 0 of SigCgt in /proc/<pid>/status, Linux). */
function catchesHangup(pid: number): boolean {
  const mask = /SigCgt:\s+([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '0';
  return (BigInt(`0x${mask}`) & 1n) === 1n;
}

const hangupLines = (server: ServerProcess) => server.lines.filter((line) => line.signal === 'SIGHUP');

perProcess('the lines one process says for SIGHUP; at several workers the supervisor forwards it and each worker says its own (workers-supervisor.test.ts)').describe('SIGHUP never ends the process', () => {
  it.each([
    ['tokens from AUTH_TOKENS', {}, 200],
    // No static token: the test's token is refused, as before the signal.
    ['JWT only', { AUTH_TOKENS: '', AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json', AUTH_ISSUER: 'https://id.test.example', AUTH_AUDIENCE: 'plant-store' }, 401],
  ])('when it arrives while serving with %s, then one line is logged, creates still answer, and SIGTERM still exits 0', async (_name, env, expected) => {
    const server = await startServer(env);

    server.child.kill('SIGHUP');
    const line = await server.waitForLine((candidate) => candidate.signal === 'SIGHUP');
    const status = await create(server);
    await sleep(200);
    const exit = await server.stop('SIGTERM');

    expect(line).toMatchObject({ level: 30, msg: NOTHING_TO_RELOAD, state: 'serving' });
    expect(hangupLines(server)).toHaveLength(1);
    expect(status).toBe(expected);
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('when AUTH_TOKENS_FILE is set, then the reload logs its line and no other', async () => {
    const file = path.join(tempDataDir(), 'tokens');
    writeFileSync(file, `${TOKEN}\n`);
    const server = await startServer({ AUTH_TOKENS: '', AUTH_TOKENS_FILE: file });

    server.child.kill('SIGHUP');
    await server.waitForLine((line) => line.msg === 'static tokens reloaded' && line.trigger === 'SIGHUP');
    await sleep(200);
    const status = await create(server);
    const exit = await server.stop('SIGTERM');

    expect(status).toBe(200);
    expect(server.lines.filter((line) => line.signal === 'SIGHUP' || line.trigger === 'SIGHUP')).toHaveLength(1);
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('when it arrives while the process is still loading, then it starts, listens, and logs the line once', async () => {
    const server = await startServer({}, { expectListening: false });
    const pid = server.child.pid ?? 0;
    const giveUpAt = performance.now() + 10_000;
    while (!catchesHangup(pid) && performance.now() < giveUpAt) await sleep(1);

    server.child.kill('SIGHUP');
    const listening = await server.waitForLine((line) => line.msg === 'listening');
    const line = await server.waitForLine((candidate) => candidate.signal === 'SIGHUP');
    const health = await rawRequest(`http://127.0.0.1:${String(listening.port)}`, { method: 'GET', path: '/healthz' });
    const exit = await server.stop('SIGTERM');

    // Node runs a signal's listeners on the event loop: one that came during loading is handled once main() is done.
    expect(line.msg).toBe(NOTHING_TO_RELOAD);
    expect(hangupLines(server)).toHaveLength(1);
    expect(health.status).toBe(200);
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('when it arrives during the drain after SIGTERM, then the create in flight still gets its 200 and the exit is 0', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_MS: '5000' });
    const body = JSON.stringify(aNewPlant());
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      response += chunk;
    });
    const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(response)));
    socket.write(
      `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`,
    );
    await sleep(200);

    server.child.kill('SIGTERM');
    await server.waitForLine((line) => String(line.msg).startsWith('shutting down'));
    server.child.kill('SIGHUP');
    const line = await server.waitForLine((candidate) => candidate.signal === 'SIGHUP');
    socket.write(body.slice(5));
    const answer = await closed;
    const exit = await server.exited;

    expect(line).toMatchObject({ msg: NOTHING_TO_RELOAD, state: 'draining' });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
