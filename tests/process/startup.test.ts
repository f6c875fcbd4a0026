import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { startServer, tempDataDir } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

const json = (token: string = TOKEN) => ({ 'Content-Type': 'application/json', Authorization: `Bearer ${token}` });

describe('starting the server process', () => {
  it('when the default DATABASE_URL is used, then data/plants.db is created under the working directory and migrated', async () => {
    const cwd = tempDataDir();
    const server = await startServer({ DATABASE_URL: '' }, { cwd });

    const ready = await rawRequest(server.url, { method: 'GET', path: '/readyz' });
    const databaseLine = server.lines.find((line) => line.msg === 'database ready');
    await server.stop();

    expect(ready.status).toBe(200);
    expect(databaseLine?.database).toBe(path.join(cwd, 'data', 'plants.db'));
    expect(existsSync(path.join(cwd, 'data', 'plants.db'))).toBe(true);
  });

  it('when a variable is invalid, then the process exits non-zero naming the variable', async () => {
    const server = await startServer({ PORT: 'eighty' }, { expectListening: false });

    const { code } = await server.exited;

    expect(code).toBe(1);
    expect(server.stderr()).toContain('PORT');
  });

  it('when NODE_ENV=production has no token, then the process refuses to start', async () => {
    const server = await startServer({ NODE_ENV: 'production', AUTH_TOKENS: '' }, { expectListening: false });

    const { code } = await server.exited;

    expect(code).toBe(1);
    expect(server.stderr()).toContain('AUTH_TOKENS or AUTH_TOKENS_FILE must be set when NODE_ENV=production');
  });

  it('when no token is configured outside production, then it prints one generated token once and accepts it', async () => {
    const server = await startServer({ AUTH_TOKENS: '' });
    const warnings = server.lines.filter((line) => typeof line.token === 'string');
    const token = String(warnings[0]?.token);

    const created = await rawRequest(server.url, { headers: json(token), body: JSON.stringify(aNewPlant()) });
    await server.stop();

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40 });
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(created.status).toBe(200);
    expect(server.lines.filter((line) => JSON.stringify(line).includes(token))).toHaveLength(1);
  });

  it('when tokens come from AUTH_TOKENS_FILE, then each line is accepted', async () => {
    const file = path.join(tempDataDir(), 'tokens');
    const second = 'second-token-from-a-mounted-secret-file';
    writeFileSync(file, `${TOKEN}\n${second}\n`);
    const server = await startServer({ AUTH_TOKENS: '', AUTH_TOKENS_FILE: file, NODE_ENV: 'production' });

    const response = await rawRequest(server.url, { headers: json(second), body: JSON.stringify(aNewPlant()) });
    await server.stop();

    expect(response.status).toBe(200);
  });

  it('when an applied migration file was edited, then the start stops with a message naming it', async () => {
    const dir = tempDataDir();
    const databaseUrl = `file:${path.join(dir, 'plants.db')}`;
    const first = await startServer({ DATABASE_URL: databaseUrl });
    await first.stop();
    const db = new Database(path.join(dir, 'plants.db'));
    db.prepare("UPDATE schema_migrations SET checksum = 'edited' WHERE name = '001-create-plants.sql'").run();
    db.close();

    const second = await startServer({ DATABASE_URL: databaseUrl }, { expectListening: false });
    const { code } = await second.exited;

    expect(code).toBe(1);
    expect(second.lines.find((line) => line.level === 60)?.msg).toMatch(/^cannot start: migration 001-create-plants\.sql was edited after it was applied/);
  });
});

describe('data across restarts', () => {
  it('when the server is stopped and started on the same file, then the plants are still there', async () => {
    const databaseUrl = `file:${path.join(tempDataDir(), 'plants.db')}`;
    const plant = aNewPlant({ id: '9007199254740993' });
    const body = `{"id": 9007199254740993, "name": "${String(plant.name)}", "tag": "kept"}`;
    const first = await startServer({ DATABASE_URL: databaseUrl });
    const created = await rawRequest(first.url, { headers: json(), body });
    await first.stop();

    const second = await startServer({ DATABASE_URL: databaseUrl });
    const retry = await rawRequest(second.url, { headers: json(), body });
    const conflict = await rawRequest(second.url, { headers: json(), body: body.replace('"kept"', '"other"') });
    const neighbour = await rawRequest(second.url, { headers: json(), body: body.replace('9007199254740993', '9007199254740992').replace('"kept"', '"other"') });
    await second.stop();

    expect([created.status, retry.status, (conflict.body as { error: number }).error, neighbour.status]).toEqual([200, 200, 40007, 200]);
  });

  it('when the process is killed with SIGKILL right after a 200, then the plant survives', async () => {
    const databaseUrl = `file:${path.join(tempDataDir(), 'plants.db')}`;
    const plant = aNewPlant();
    const first = await startServer({ DATABASE_URL: databaseUrl });
    const created = await rawRequest(first.url, { headers: json(), body: JSON.stringify(plant) });
    await first.stop('SIGKILL');

    const second = await startServer({ DATABASE_URL: databaseUrl });
    const conflict = await rawRequest(second.url, { headers: json(), body: JSON.stringify({ ...plant, name: 'other' }) });
    await second.stop();

    expect([created.status, conflict.status, (conflict.body as { error: number }).error]).toEqual([200, 400, 40007]);
  });
});
