import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { openStream } from '../helpers/sse';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { sleep } from '../helpers/common';

const ROOT = path.resolve(__dirname, '..', '..');
const HASHED = 'hashed-token-0123456789abcdefghijklmnopqrstuvwxyz';
const PLAIN = 'plain-token-0123456789abcdefghijklmnopqrstuvwxyz';
const LATER = 'later-token-0123456789abcdefghijklmnopqrstuvwxyz';
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

/** Replaces the file in one rename, as an operator (or a Kubernetes secret update) should. */
function replaceFile(file: string, text: string): void {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

const create = (server: ServerProcess, token: string) =>
  rawRequest(server.url, {
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify(aNewPlant()),
  }).then(
    (response) => response.status,
    (error: NodeJS.ErrnoException) => error.code ?? 'error',
  );

/**
 * Keeps `workers` requests with `token` in flight, one after another on each, until stop() is called; returns each
 * worker's outcomes in its own order (requests of different workers finish in no order a test may rely on).
 */
function keepSending(server: ServerProcess, token: string, workers: number) {
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    const outcomes: (number | string)[] = [];
    while (running) outcomes.push(await create(server, token));
    return outcomes;
  });
  return {
    stop: async () => {
      running = false;
      return Promise.all(loops);
    },
  };
}

async function waitForStatus(server: ServerProcess, token: string, status: number, withinMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    if ((await create(server, token)) === status) return performance.now() - started;
    await sleep(20);
  }
  throw new Error(`no ${status} for the token within ${withinMs} ms`);
}

describe('rotating AUTH_TOKENS_FILE without a restart', () => {
  let file: string;
  let server: ServerProcess;
  beforeEach(async () => {
    file = path.join(tempDataDir(), 'tokens');
    writeFileSync(file, `# ops\nsha256:${sha256(HASHED)}\n${PLAIN}\n`);
    server = await startServer({ AUTH_TOKENS: '', AUTH_TOKENS_FILE: file, NODE_ENV: 'production' });
  });
  afterEach(async () => {
    await server.stop();
  });

  it('when a token is removed and SIGHUP arrives with requests in flight, then it is locked out, the others keep working and nothing is dropped', async () => {
    const removed = keepSending(server, HASHED, 3);
    const kept = keepSending(server, PLAIN, 3);
    await sleep(300);

    replaceFile(file, `${PLAIN}\n${LATER}\n`);
    server.child.kill('SIGHUP');
    await server.waitForLine((line) => line.msg === 'static tokens reloaded' && line.trigger === 'SIGHUP');
    await sleep(300);
    const removedOutcomes = await removed.stop();
    const keptOutcomes = await kept.stop();
    const later = await create(server, LATER);

    expect(new Set(keptOutcomes.flat())).toEqual(new Set([200]));
    expect(keptOutcomes.flat().length).toBeGreaterThan(6);
    // Every request answered: on each connection 200 until the swap, 401 after it, never an error and never 200 again.
    for (const outcomes of removedOutcomes) {
      const firstRefused = outcomes.indexOf(401);
      expect(firstRefused).toBeGreaterThan(0);
      expect(new Set(outcomes.slice(0, firstRefused))).toEqual(new Set([200]));
      expect(new Set(outcomes.slice(firstRefused))).toEqual(new Set([401]));
    }
    expect(later).toBe(200);
  });

  it('when a token with an open change stream is removed and SIGHUP arrives, then the stream ends within a second with a last resume event and reconnecting is 401', async () => {
    const reader = await openStream(server.url, '/plants/events', { Authorization: `Bearer ${HASHED}` });
    const other = await openStream(server.url, '/plants/events', { Authorization: `Bearer ${PLAIN}` });
    await create(server, PLAIN);
    await reader.waitFor((events) => events.some((event) => event.event === 'plant.created'));

    replaceFile(file, `${PLAIN}\n`);
    server.child.kill('SIGHUP');
    const started = performance.now();
    const ended = await Promise.race([reader.ended.then(() => performance.now() - started), sleep(3000).then(() => undefined)]);
    const again = await openStream(server.url, '/plants/events', { Authorization: `Bearer ${HASHED}`, 'Last-Event-ID': reader.named().at(-1)?.id ?? '' });
    await create(server, PLAIN);
    await other.waitFor((events) => events.filter((event) => event.event === 'plant.created').length === 2);
    other.close();

    expect(ended).toBeLessThan(1000);
    expect(reader.named().at(-1)).toEqual({ event: 'resume', id: reader.named().at(-2)?.id, data: '{"reason":"token_revoked"}' });
    expect(again.status).toBe(401);
  });

  it('when the file is replaced without a signal, then a removed token is locked out within a second', async () => {
    const before = await create(server, HASHED);

    replaceFile(file, `${PLAIN}\n`);
    const lockedOutAfterMs = await waitForStatus(server, HASHED, 401, 3000);

    expect(before).toBe(200);
    expect(lockedOutAfterMs).toBeLessThan(1000);
    expect(await create(server, PLAIN)).toBe(200);
    await server.waitForLine((line) => line.msg === 'static tokens reloaded' && line.trigger === 'file change');
  });

  it('when the new file does not parse, then the previous set stays in force and an error is logged', async () => {
    replaceFile(file, `${PLAIN}\nsha256:not-a-digest\n`);
    server.child.kill('SIGHUP');
    const error = await server.waitForLine((line) => line.level === 50 && line.trigger === 'SIGHUP');

    expect(error.msg).toBe('static tokens not reloaded, the previous set stays in force: AUTH_TOKENS_FILE line 2: sha256: must be followed by 64 hex digits');
    expect([await create(server, HASHED), await create(server, PLAIN)]).toEqual([200, 200]);
    expect(server.child.exitCode).toBeNull();
  });

  it('when requests carry static tokens, then the log names each caller by index or digest prefix, never the token', async () => {
    await create(server, HASHED);
    await create(server, PLAIN);
    await server.stop();

    const callers = server.lines.filter((line) => line.msg === 'request').map((line) => line.caller);
    expect(callers).toEqual([`sha256:${sha256(HASHED).slice(0, 8)}`, 'token:2']);
    expect(JSON.stringify(server.lines)).not.toContain(HASHED);
    expect(JSON.stringify(server.lines)).not.toContain(PLAIN);
  });
});

describe('AUTH_TOKENS_FILE at start', () => {
  it('when the file cannot be read, then the process refuses to start and names the variable', async () => {
    const server = await startServer({ AUTH_TOKENS: '', AUTH_TOKENS_FILE: path.join(tempDataDir(), 'missing'), NODE_ENV: 'production' }, { expectListening: false });

    const { code } = await server.exited;

    expect(code).toBe(1);
    expect(server.lines.find((line) => line.level === 60)?.msg).toMatch(/^cannot start: AUTH_TOKENS_FILE: cannot read .*missing \(ENOENT\)$/);
  });
});

describe('npm run token', () => {
  const mint = (...scopes: string[]) => {
    const output = execFileSync('npm', ['run', '-s', 'token', '--', ...scopes], { cwd: ROOT, encoding: 'utf8' });
    const [, token = '', line = ''] = /^Token[^\n]*\n {2}(\S+)\nLine for AUTH_TOKENS_FILE[^\n]*\n {2}([^\n]+)\n$/.exec(output) ?? [];
    return { token, line };
  };

  it('when a token is made and its line is put in the file, then the token works with the scopes it was made with', async () => {
    const writer = mint();
    const reader = mint('plants:read');
    const file = path.join(tempDataDir(), 'tokens');
    writeFileSync(file, `${writer.line}\n${reader.line}\n`);
    const server = await startServer({ AUTH_TOKENS: '', AUTH_TOKENS_FILE: file });

    const statuses = [await create(server, writer.token), await create(server, reader.token)];
    await server.stop();

    expect(writer.token).toMatch(/^[\w-]{43}$/);
    expect({ writer: writer.line, reader: reader.line }).toEqual({
      writer: `sha256:${sha256(writer.token)}`,
      reader: `sha256:${sha256(reader.token)} plants:read`,
    });
    expect(statuses).toEqual([200, 403]);
  });
});
