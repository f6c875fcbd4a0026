import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, tempDataDir } from '../helpers/server-process';

describe('starting over a lost store', () => {
  it('when the database file is missing but its -wal remains, then the start is refused naming the file and no fresh store is made', async () => {
    const file = path.join(tempDataDir(), 'plants.db');
    writeFileSync(`${file}-wal`, 'left over from the store that was here');

    const server = await startServer({ DATABASE_URL: `file:${file}` }, { expectListening: false });
    const { code } = await server.exited;

    expect(code).toBe(1);
    expect(server.lines.find((line) => line.level === 60)?.msg).toBe(
      `cannot start: the database file ${file} is missing but ${file}-wal remain: the store existed and was lost or moved; ` +
        'restore the file (or remove the leftovers to start an empty store on purpose)',
    );
    expect(existsSync(file)).toBe(false);
  });
});
