import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { aNewPlant, withTimes } from '../helpers/plants';
import { startServer, tempDataDir } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { sleep } from '../helpers/common';

type Answer = { status: number; body: string; ms: number };

function send(url: string, method: string, body?: Record<string, unknown>): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.request(url, { method, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text, ms: performance.now() - started }));
    });
    request.on('error', () => resolve({ status: 0, body: '', ms: performance.now() - started }));
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

// Issue 36: the group commit's transaction runs on the writer thread, so while another process holds SQLite's
// write lock the process still answers health checks and reads. The bound (500 ms) is ten times generous: it
// tells a loop that answers from one that waits for the lock, not how fast it answers.
describe('writes never stop the event loop (SQLite, one process)', () => {
  it('when another process holds the write lock for 2 s, then /healthz and a read by id answer meanwhile and the waiting create completes after it', async () => {
    const dir = tempDataDir();
    const file = path.join(dir, 'plants.db');
    const server = await startServer({ DATABASE_URL: `file:${file}`, DATABASE_BUSY_TIMEOUT_MS: '10000' });
    const stored = aNewPlant();
    const first = await send(`${server.url}/plants`, 'POST', stored);
    const locker = new Database(file);
    const waiting = aNewPlant();

    locker.exec('BEGIN IMMEDIATE');
    const lockedAt = performance.now();
    const create = send(`${server.url}/plants`, 'POST', waiting);
    const probes: Answer[] = [];
    while (performance.now() - lockedAt < 2000) {
      probes.push(await send(`${server.url}/healthz`, 'GET'), await send(`${server.url}/plants/${String(stored.id)}`, 'GET'));
      await sleep(100);
    }
    const pendingWhileLocked = await Promise.race([create.then(() => 'answered'), sleep(0).then(() => 'pending')]);
    locker.exec('COMMIT');
    const created = await create;
    locker.close();
    await server.stop();

    expect(first.status).toBe(200);
    expect(pendingWhileLocked).toBe('pending');
    expect(probes.length).toBeGreaterThanOrEqual(8);
    expect(probes.filter((probe) => probe.status !== 200 || probe.ms >= 500)).toEqual([]);
    expect(probes.filter((probe) => probe.body.includes('"name"')).map((probe) => JSON.parse(probe.body) as unknown)).toContainEqual(withTimes(stored));
    expect({ status: created.status, body: JSON.parse(created.body) as unknown }).toEqual({ status: 200, body: { name: waiting.name, tag: waiting.tag } });
  });

  it('when the lock is held past DATABASE_BUSY_TIMEOUT_MS, then the waiting create answers 503 50301 and the loop answered meanwhile', async () => {
    const dir = tempDataDir();
    const file = path.join(dir, 'plants.db');
    const server = await startServer({ DATABASE_URL: `file:${file}`, DATABASE_BUSY_TIMEOUT_MS: '1000' });
    await send(`${server.url}/plants`, 'POST', aNewPlant());
    const locker = new Database(file);

    locker.exec('BEGIN IMMEDIATE');
    const lockedAt = performance.now();
    const create = send(`${server.url}/plants`, 'POST', aNewPlant());
    const probes: Answer[] = [];
    while (performance.now() - lockedAt < 2000) {
      probes.push(await send(`${server.url}/healthz`, 'GET'));
      await sleep(100);
    }
    const refused = await create;
    locker.exec('COMMIT');
    locker.close();
    await server.stop();

    expect(probes.filter((probe) => probe.status !== 200 || probe.ms >= 500)).toEqual([]);
    expect({ status: refused.status, error: (JSON.parse(refused.body) as { error: number }).error }).toEqual({ status: 503, error: 50301 });
  });
});
