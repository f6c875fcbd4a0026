import path from 'node:path';
import Database from 'better-sqlite3';
import { uniqueId } from '../helpers/plants';
import { queryJson } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { rawRequest, type RawResponse } from '../helpers/raw-request';
import { replicasForEach } from '../helpers/fixtures';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

// Issue 34: the same caller's key sent to two replicas at once (or two processes on one SQLite file) applies the write once. The other request is
// answered 409 with Retry-After (still in progress), the first's answer replayed byte for byte, or 422 when its
// request differs.
const json = { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` };

type Request = { method: string; path: string; body?: string };
/** One keyed write raced on both replicas: `a` to the first, `b` (the same request unless it differs) to the second. */
type Race = { key: string; a: Request; b: Request; plant: number; events: number };

const send = (server: ServerProcess, key: string, { method, path, body }: Request) =>
  rawRequest(server.url, { method, path, body, headers: { ...json, 'Idempotency-Key': key } });

const create = (server: ServerProcess, id: number) => rawRequest(server.url, { headers: json, body: JSON.stringify({ id, name: `plant ${id}` }) });

const isProcessed = (answer: RawResponse) => answer.headers['idempotent-replayed'] === undefined && answer.status !== 409 && answer.status !== 422;
const replayOf = (answer: RawResponse) => ({ status: answer.status, etag: answer.headers.etag, location: answer.headers.location, text: answer.text });
const errorCode = (answer: RawResponse) => (answer.body as { error?: number } | undefined)?.error;

/** What is wrong with a raced pair, or 'ok': exactly one processed; the other a 409, a byte-identical replay, or the 422. */
function verdict(race: Race, answers: [RawResponse, RawResponse]): string {
  const processed = answers.filter(isProcessed);
  if (processed.length !== 1) return `${race.key}: ${processed.length} processed (${answers.map((answer) => answer.status).join(', ')})`;
  const [first] = processed as [RawResponse];
  const other = answers.find((answer) => answer !== first) as RawResponse;
  if (other.status === 409) return other.headers['retry-after'] !== undefined && errorCode(other) === 40902 ? 'ok' : `${race.key}: 409 without Retry-After or 40902`;
  if (race.a.body !== race.b.body) return other.status === 422 && errorCode(other) === 42202 ? 'ok' : `${race.key}: another request answered ${other.status}`;
  if (other.headers['idempotent-replayed'] !== 'true') return `${race.key}: not replayed`;
  return JSON.stringify(replayOf(other)) === JSON.stringify(replayOf(first)) ? 'ok' : `${race.key}: replay differs`;
}

/** One round: a keyed create, PATCH (same and differing bodies), DELETE and batch, on plants of its own. */
async function roundOn(a: ServerProcess): Promise<Race[]> {
  const [created, patched, differing, deleted, batched] = Array.from({ length: 5 }, () => uniqueId());
  await Promise.all([patched, differing, deleted].map((id) => create(a, id as number)));
  const same = (key: string, request: Request, plant: number, events: number): Race => ({ key: `${key}-${plant}`, a: request, b: request, plant, events });
  const operations = [
    { op: 'create', plant: { id: batched, name: `batched ${batched}` } },
    { op: 'update', id: batched, patch: { name: `renamed ${batched}` } },
    { op: 'delete', id: batched },
  ];
  return [
    same('create', { method: 'POST', path: '/plants', body: JSON.stringify({ id: created, name: `keyed ${created}` }) }, created as number, 1),
    same('patch', { method: 'PATCH', path: `/plants/${patched}`, body: JSON.stringify({ name: `patched ${patched}` }) }, patched as number, 2),
    {
      key: `differing-${differing}`,
      a: { method: 'PATCH', path: `/plants/${differing}`, body: JSON.stringify({ name: `A ${differing}` }) },
      b: { method: 'PATCH', path: `/plants/${differing}`, body: JSON.stringify({ name: `B ${differing}` }) },
      plant: differing as number,
      events: 2,
    },
    same('delete', { method: 'DELETE', path: `/plants/${deleted}` }, deleted as number, 2),
    same('batch', { method: 'POST', path: '/plants/batch', body: JSON.stringify({ operations }) }, batched as number, 3),
  ];
}

/** Rounds of ten at once (each process's group commits hold several keys, which the other races), then the replays. */
async function raceAndReplay(a: ServerProcess, b: ServerProcess) {
  const races: Race[] = [];
  const verdicts: string[] = [];
  const first = new Map<string, { answer: RawResponse; request: Request; other: Request }>();
  for (let round = 0; round < 4; round += 1) {
    const raced = (await Promise.all(Array.from({ length: 10 }, () => roundOn(a)))).flat();
    const answers = await Promise.all(raced.map(async (race) => Promise.all([send(a, race.key, race.a), send(b, race.key, race.b)])));
    raced.forEach((race, index) => {
      const [onA, onB] = answers[index] as [RawResponse, RawResponse];
      verdicts.push(verdict(race, [onA, onB]));
      if (isProcessed(onA)) first.set(race.key, { answer: onA, request: race.a, other: race.b });
      else if (isProcessed(onB)) first.set(race.key, { answer: onB, request: race.b, other: race.a });
    });
    races.push(...raced);
  }
  // After the commit, either process replays the first answer byte for byte, and the other request of a differing pair is the 422.
  const replays = await Promise.all(
    [...first].map(async ([key, { answer, request, other }]) => {
      const [onA, onB] = await Promise.all([send(a, key, request), send(b, key, request)]);
      // After B's replay: while a request with the key is in flight on B, B answers another with it 409.
      const differing = await send(b, key, other);
      const expected = JSON.stringify(replayOf(answer));
      const same = (replay: RawResponse) => replay.headers['idempotent-replayed'] === 'true' && JSON.stringify(replayOf(replay)) === expected;
      return { key, a: same(onA), b: same(onB), other: other.body === request.body ? same(differing) : differing.status === 422 };
    }),
  );
  return { races, verdicts, replays };
}

/** Each race applied once: its plant's events in the feed, one key row per race, and the replays. */
function expectOnce({ races, verdicts, replays }: Awaited<ReturnType<typeof raceAndReplay>>, events: Map<number, number>, keys: number): void {
  expect(verdicts.filter((text) => text !== 'ok')).toEqual([]);
  expect(races.filter((race) => events.get(race.plant) !== race.events).map((race) => `${race.key}: ${events.get(race.plant) ?? 0} events`)).toEqual([]);
  expect(keys).toBe(races.length);
  expect(replays.filter((replay) => !(replay.a && replay.b && replay.other))).toEqual([]);
}

describeWith('postgres', 'Idempotency-Key across two replicas', (server) => {
  const replicas = replicasForEach(server);

  it('when the same keyed create, PATCH, DELETE and batch go to both replicas at once, then each applies once and the other answer is a 409, the replay or the 422', async () => {
    const [a, b] = await replicas.two();

    const raced = await raceAndReplay(a, b);

    const counts = queryJson<[string, number][]>(replicas.url, "SELECT coalesce(json_agg(json_build_array(plant_id::text, n)), '[]') FROM (SELECT plant_id, count(*) AS n FROM plant_events GROUP BY plant_id) e");
    expectOnce(raced, new Map(counts.map(([id, n]) => [Number(id), n])), queryJson<number>(replicas.url, 'SELECT count(*) FROM idempotency_keys'));
  }, 120_000);
});

describe('Idempotency-Key across two processes on one SQLite file', () => {
  const started: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.stop()));
  });

  it('when the same keyed create, PATCH, DELETE and batch go to both processes at once, then each applies once and the other answer is a 409, the replay or the 422', async () => {
    const file = path.join(tempDataDir(), 'plants.db');
    started.push(await startServer({ DATABASE_URL: `file:${file}` }));
    started.push(await startServer({ DATABASE_URL: `file:${file}` }));
    const [a, b] = started as [ServerProcess, ServerProcess];

    const raced = await raceAndReplay(a, b);

    const db = new Database(file, { readonly: true });
    const counts = db.prepare('SELECT plant_id AS id, count(*) AS n FROM plant_events GROUP BY plant_id').all() as { id: number; n: number }[];
    const keys = (db.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n;
    db.close();
    expectOnce(raced, new Map(counts.map(({ id, n }) => [Number(id), n])), keys);
  }, 120_000);
});
