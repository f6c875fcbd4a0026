import { uniqueId } from '../helpers/plants';
import { bearer } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { runCli } from '../helpers/plant-store-cli';
import { openStream } from '../helpers/sse';

const app = appForAll();

// Several times the default EVENTS_STREAM_BUFFER (1,000), with names long enough that the burst is megabytes.
const BURST = 6000;

describe('a burst of changes on GET /plants/events', () => {
  it('when thousands of plants are imported beside the service, then a reader that reads promptly gets every one, by position, and is never cut off', async () => {
    const ids = Array.from({ length: BURST }, uniqueId);
    const lines = ids.map((id) => `{"id":${id},"name":"${'burst '.repeat(30)}${id}","tag":"burst"}\n`).join('');
    const reader = await openStream(app.url, '/plants/events', bearer());
    const databaseUrl = app.store === 'sqlite' ? `file:${app.dbPath}` : app.dbPath;

    const imported = await runCli(['import'], { DATABASE_URL: databaseUrl }, lines);
    const lastId = `{"id":${ids.at(-1) as number},`;
    await reader.waitFor((all) => {
      const last = all.findLast((event) => event.data !== undefined);
      return last?.event === 'resume' || last?.data?.startsWith(lastId) === true;
    }, 30_000);
    reader.close();

    expect(imported.code).toBe(0);
    const named = reader.named();
    expect(named.filter((event) => event.event !== 'plant.created')).toEqual([]);
    expect(named).toHaveLength(BURST);
    expect(named.map((event) => JSON.parse(event.data as string) as { id: number }).map((plant) => plant.id)).toEqual(ids);
    const positions = named.map((event) => BigInt(event.id as string));
    expect(positions).toEqual(positions.map((_, index) => (positions[0] as bigint) + BigInt(index)));
  }, 60_000);
});
