import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { sleep } from '../helpers/common';
import { aNewPlant } from '../helpers/plants';
import type { ServerProcess } from '../helpers/server-process';
import { childPids, JSON_HEADERS, onNewConnection, waitForLines } from '../helpers/workers';
import { createsUnderLoad, holdWriteLock, sqliteWorkersForEach, storedIds } from '../helpers/workers-sqlite';
import { tempDataDir } from '../helpers/server-process';

// Which worker answered a request: its log line, found by the X-Request-Id the answer carried.
const workerOf = (service: ServerProcess, reqId: unknown) => service.lines.find((line) => line.msg === 'request' && line.reqId === reqId)?.worker;

const errorLines = (service: ServerProcess) => service.lines.filter((line) => typeof line.level === 'number' && line.level >= 50);

describe('WORKERS=2 on SQLite', () => {
  const workers = sqliteWorkersForEach();

  it('when creates come on new connections, then both workers take them and every plant reads back from both workers', async () => {
    const { service } = await workers.start();
    const plants = Array.from({ length: 20 }, () => aNewPlant());

    const created = await Promise.all(plants.map((plant) => onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(plant) })));
    const readers = new Map<string, Set<unknown>>();
    for (const plant of plants) {
      const id = String(plant.id);
      readers.set(id, new Set());
      // Round-robin hands each new connection to the next worker: a few reads reach both.
      for (let read = 0; read < 6 && (readers.get(id)?.size ?? 0) < 2; read += 1) {
        const answer = await onNewConnection(service.url, { method: 'GET', path: `/plants/${id}`, headers: JSON_HEADERS });
        expect(answer.body).toMatchObject({ id: plant.id, name: plant.name });
        await waitForLines(service, (line) => line.msg === 'request' && line.reqId === answer.headers['x-request-id'], 1);
        readers.get(id)?.add(workerOf(service, answer.headers['x-request-id']));
      }
    }

    expect(created.map((answer) => answer.status)).toEqual(plants.map(() => 200));
    await waitForLines(service, (line) => line.msg === 'request' && line.method === 'POST', plants.length);
    expect(new Set(created.map((answer) => workerOf(service, answer.headers['x-request-id'])))).toEqual(new Set([1, 2]));
    expect([...readers.values()].map((served) => [...served].sort())).toEqual(plants.map(() => [1, 2]));
  }, 60_000);

  it('when a worker is killed with SIGKILL under 50 connections of creates, then it is replaced and every acknowledged create is stored', async () => {
    const { service, file } = await workers.start();
    const load = createsUnderLoad(service.url, 50);
    await sleep(1000);

    const [pid] = childPids(service.child.pid ?? 0);
    const listening = service.lines.filter((line) => line.msg === 'worker listening').length;
    process.kill(pid ?? 0, 'SIGKILL');
    // The replacement starts while the write lock is taken (held here for 1 s, as a commit holds it): it waits, never fails on it.
    const lock = holdWriteLock(file);
    await sleep(1000);
    lock.release();
    await waitForLines(service, (line) => line.msg === 'worker listening', listening + 1, 20_000);
    await sleep(1000);
    await load.stop();
    const stored = storedIds(file);

    expect(service.lines.filter((line) => line.msg === 'worker exited')).toEqual([expect.objectContaining({ level: 50, pid, signal: 'SIGKILL', exitsLastMinute: 1 })]);
    expect(load.acknowledged.length).toBeGreaterThan(100);
    expect(load.acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect((await onNewConnection(service.url, { method: 'GET', path: '/readyz' })).status).toBe(200);
    expect((await onNewConnection(service.url, { method: 'GET', path: '/readyz' })).status).toBe(200);
  }, 120_000);

  it('when another process holds the write lock past DATABASE_BUSY_TIMEOUT_MS, then creates answer 503 50301 and none of them is stored, and creates succeed once it is released', async () => {
    const { service, file } = await workers.start({ DATABASE_BUSY_TIMEOUT_MS: '300' });
    const lock = holdWriteLock(file);

    const plants = Array.from({ length: 6 }, () => aNewPlant());
    const refused = await Promise.all(plants.map((plant) => onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(plant) })));
    lock.release();
    const after = await Promise.all(plants.map((plant) => onNewConnection(service.url, { method: 'PUT', path: `/plants/${String(plant.id)}`, headers: JSON_HEADERS, body: JSON.stringify({ name: plant.name, tag: plant.tag }) })));
    const stored = storedIds(file);
    await waitForLines(service, (line) => line.msg === 'request' && line.status === 503, plants.length);

    expect(refused.map((answer) => [answer.status, (answer.body as { error?: unknown }).error])).toEqual(plants.map(() => [503, 50301]));
    expect(new Set(refused.map((answer) => workerOf(service, answer.headers['x-request-id'])))).toEqual(new Set([1, 2]));
    expect(after.map((answer) => answer.status)).toEqual(plants.map(() => 201));
    expect(plants.filter((plant) => !stored.has(String(plant.id)))).toEqual([]);
  }, 60_000);

  it('when ./data holds an empty file, then slot 1 migrates it alone and slot 2 starts only once slot 1 listens', async () => {
    const dir = tempDataDir();
    mkdirSync(path.join(dir, 'data'));
    writeFileSync(path.join(dir, 'data', 'plants.db'), '');

    const { service } = await workers.start({}, { dir });
    const created = await onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(aNewPlant()) });
    // Each worker's lines reach the supervisor's stdout in batches, after the listening message that counts it.
    await waitForLines(service, (line) => line.msg === 'database ready', 2);

    const ready = service.lines.filter((line) => line.msg === 'database ready');
    const firstListening = service.lines.find((line) => line.msg === 'worker listening' && line.worker === 1);
    expect(created.status).toBe(200);
    expect(ready.map((line) => [line.worker, (line.applied as string[]).length > 0])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(Number(ready[1]?.time)).toBeGreaterThanOrEqual(Number(firstListening?.time));
    expect(errorLines(service)).toEqual([]);
  }, 60_000);

  it('when SIGTERM comes under 20 connections of creates, then every worker drains, the supervisor exits 0 and every acknowledged create is stored', async () => {
    const { service, file } = await workers.start();
    const load = createsUnderLoad(service.url, 20);
    await sleep(1500);

    const exit = await service.stop('SIGTERM');
    await load.stop();
    const stored = storedIds(file);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(load.acknowledged.length).toBeGreaterThan(100);
    expect(load.acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(errorLines(service)).toEqual([]);
    expect(service.lines.filter((line) => line.msg === 'stopped').map((line) => line.code)).toEqual([0, 0, 0]);
  }, 60_000);

  it('when a create waiting for the write lock loses its client and SIGTERM follows, then the drain commits it before closing the store and logs no error', async () => {
    const { service, file } = await workers.start();
    const lock = holdWriteLock(file);
    const plant = aNewPlant();

    const gone = await onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(plant), timeoutMs: 300 }).catch((error: unknown) => error);
    const exit = service.stop('SIGTERM');
    await sleep(500);
    lock.release();

    expect(gone).toBeInstanceOf(Error);
    expect(await exit).toEqual({ code: 0, signal: null });
    expect(storedIds(file).has(String(plant.id))).toBe(true);
    expect(errorLines(service)).toEqual([]);
  }, 60_000);
});
