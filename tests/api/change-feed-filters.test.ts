import Database from 'better-sqlite3';
import { aNewPlant, plantText, uniqueId } from '../helpers/plants';
import { runSql } from '../helpers/postgres';
import { bearer, postPlant, type TestApp } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { openStream, type SseEvent, type SseStream } from '../helpers/sse';

const app = appForAll();
const opened: SseStream[] = [];
afterEach(() => {
  for (const stream of opened.splice(0)) stream.close();
});

async function stream(path: string, headers: Record<string, string> = {}) {
  const opening = await openStream(app.url, path, { ...bearer(), ...headers });
  opened.push(opening);
  return opening;
}
const create = async (plant: Record<string, unknown>) => expect((await postPlant(app, plant)).status).toBe(200);
const patch = async (id: unknown, body: unknown) =>
  expect((await app.request.patch(`/plants/${id as number}`).set({ 'Content-Type': 'application/json', ...bearer() }).send(JSON.stringify(body))).status).toBe(200);
const remove = async (id: unknown) => expect((await app.request.delete(`/plants/${id as number}`).set(bearer())).status).toBe(204);

/** What a reader is given: each event's type and data (its id checked apart, as positions depend on other tests). */
const seen = (events: SseEvent[]) => events.filter((event) => event.data !== undefined).map((event) => [event.event, event.data]);
const created = (id: unknown, body: string) => ['plant.created', plantText(`{"id":${id as number},${body}}`)];
const updated = (id: unknown, body: string) => ['plant.updated', plantText(`{"id":${id as number},${body}}`)];
const deleted = (id: unknown) => ['plant.deleted', `{"id":${id as number}}`];
const carries = (id: unknown) => (events: SseEvent[]) => events.some((event) => event.data?.startsWith(`{"id":${id as number},`));

/**
 * Opens `path` live, runs the changes, and waits for `last` (a plant the filter takes, created at the end). Then
 * resumes the same filter from where the live stream started: the catch-up must give the very same events.
 */
async function filtered(path: string, changes: () => Promise<void>, last: Record<string, unknown>): Promise<SseEvent[]> {
  const live = await stream(path);
  const [first] = await live.waitFor((events) => events.length > 0);
  await changes();
  await create(last);
  const events = (await live.waitFor(carries(last.id))).filter((event) => event.data !== undefined);

  const resumed = await stream(path, { 'Last-Event-ID': first?.id as string });
  const caughtUp = (await resumed.waitFor(carries(last.id))).filter((event) => event.data !== undefined);

  expect(caughtUp).toEqual(events);
  return events;
}

describe('GET /plants/events?q=', () => {
  it('when plants are created or renamed into the search, then their changes come; a plant that never matched never comes', async () => {
    const word = `fern${uniqueId()}`;
    const inside = aNewPlant({ name: `Big ${word}`, tag: 'shade' });
    const renamed = aNewPlant({ name: 'Palm' });
    const never = aNewPlant({ name: 'Cactus' });
    const last = aNewPlant({ name: `${word} last` });

    const events = await filtered(`/plants/events?q=${word}`, async () => {
      await create(never);
      await create(inside);
      await create(renamed);
      await patch(never.id, { name: 'Cactus two' });
      await patch(never.id, { tag: 'dry' });
      await remove(never.id);
      await patch(renamed.id, { name: `Palm ${word.toUpperCase()}` });
    }, last);

    expect(seen(events)).toEqual([
      created(inside.id, `"name":"Big ${word}","tag":"shade"`),
      updated(renamed.id, `"name":"Palm ${word.toUpperCase()}","tag":"indoor"`),
      created(last.id, `"name":"${word} last","tag":"indoor"`),
    ]);
  });

  it('when a matching plant is edited, renamed out of the search and changed again, then the rename out comes once with its new state, later changes not', async () => {
    const word = `fern${uniqueId()}`;
    const plant = aNewPlant({ name: `${word} one` });
    const last = aNewPlant({ name: `${word} last` });

    const events = await filtered(`/plants/events?q=${word}`, async () => {
      await create(plant);
      await patch(plant.id, { tag: 'moved' });
      await patch(plant.id, { name: `Two ${word}` });
      await patch(plant.id, { name: 'Gone' });
      await patch(plant.id, { tag: 'again' });
      await patch(plant.id, { name: 'Gone twice' });
      await remove(plant.id);
    }, last);

    expect(seen(events)).toEqual([
      created(plant.id, `"name":"${word} one","tag":"indoor"`),
      updated(plant.id, `"name":"${word} one","tag":"moved"`),
      updated(plant.id, `"name":"Two ${word}","tag":"moved"`),
      updated(plant.id, `"name":"Gone","tag":"moved"`),
      created(last.id, `"name":"${word} last","tag":"indoor"`),
    ]);
  });

  it('when a matching plant is deleted, then its delete comes', async () => {
    const word = `fern${uniqueId()}`;
    const plant = aNewPlant({ name: `${word}` });
    const last = aNewPlant({ name: `${word} last` });

    const events = await filtered(`/plants/events?q=${word}`, async () => {
      await create(plant);
      await remove(plant.id);
    }, last);

    expect(seen(events)).toEqual([created(plant.id, `"name":"${word}","tag":"indoor"`), deleted(plant.id), created(last.id, `"name":"${word} last","tag":"indoor"`)]);
  });

  it('when q differs from names in case or Unicode form, then names are compared in NFKC and lower-cased (ﬁ is fi; ß is not ss)', async () => {
    const word = `${uniqueId()}`;
    const ligature = aNewPlant({ name: `ﬁcus-${word}` });
    const upper = aNewPlant({ name: `FICUS-${word}` });
    const other = aNewPlant({ name: `Fucus-${word}` });
    const sharp = aNewPlant({ name: `Straße-${word}` });
    const plain = aNewPlant({ name: `strasse-${word}` });
    const last = aNewPlant({ name: `Ficus-${word} last` });

    const ficus = await filtered(`/plants/events?q=${encodeURIComponent(`FICUS-${word}`)}`, async () => {
      for (const plant of [ligature, upper, other, sharp, plain]) await create(plant);
    }, last);
    const strasse = await stream(`/plants/events?q=STRASSE-${word}`, { 'Last-Event-ID': '0' });
    const streetEvents = await strasse.waitFor(carries(plain.id));

    expect(seen(ficus).map(([, data]) => data)).toEqual([
      plantText(`{"id":${ligature.id as number},"name":"ﬁcus-${word}","tag":"indoor"}`),
      plantText(`{"id":${upper.id as number},"name":"FICUS-${word}","tag":"indoor"}`),
      plantText(`{"id":${last.id as number},"name":"Ficus-${word} last","tag":"indoor"}`),
    ]);
    expect(seen(streetEvents).filter(([, data]) => (data as string).includes(word))).toEqual([created(plain.id, `"name":"strasse-${word}","tag":"indoor"`)]);
  });
});

describe('GET /plants/events?tag=', () => {
  it('when plants are tagged into the tag, out of it, or deleted in it, then each change comes; plants never in it never come', async () => {
    const tag = `feed-${uniqueId()}`;
    const into = aNewPlant({ tag: 'elsewhere' });
    const away = aNewPlant({ tag });
    const never = aNewPlant({ tag: 'elsewhere' });
    const last = aNewPlant({ tag });

    const events = await filtered(`/plants/events?tag=${tag}`, async () => {
      await create(into);
      await create(away);
      await create(never);
      await patch(into.id, { tag });
      await patch(away.id, { tag: null });
      await patch(away.id, { name: 'Away and renamed' });
      await patch(never.id, { tag: 'still elsewhere' });
      await remove(into.id);
    }, last);

    expect(seen(events)).toEqual([
      created(away.id, `"name":"${away.name as string}","tag":"${tag}"`),
      updated(into.id, `"name":"${into.name as string}","tag":"${tag}"`),
      updated(away.id, `"name":"${away.name as string}"`),
      deleted(into.id),
      created(last.id, `"name":"${last.name as string}","tag":"${tag}"`),
    ]);
  });
});

describe('GET /plants/events?q=&tag=', () => {
  it('when both are given, then a change comes when both held before it or both hold after it', async () => {
    const word = `fern${uniqueId()}`;
    const tag = `feed-${uniqueId()}`;
    const both = aNewPlant({ name: `${word} both`, tag });
    const otherTag = aNewPlant({ name: `${word} other tag`, tag: 'elsewhere' });
    const otherName = aNewPlant({ name: 'Palm', tag });
    const crossing = aNewPlant({ name: `${word} crossing`, tag: 'elsewhere' });
    const last = aNewPlant({ name: `${word} last`, tag });

    const events = await filtered(`/plants/events?q=${word}&tag=${tag}`, async () => {
      for (const plant of [both, otherTag, otherName, crossing]) await create(plant);
      await patch(otherTag.id, { tag });
      await patch(otherName.id, { name: `Palm ${word}` });
      // Before: the name matched, not the tag; after: the tag, not the name. Neither side held both.
      await patch(crossing.id, { name: 'Plain', tag });
      await patch(both.id, { tag: 'gone' });
      await patch(both.id, { name: 'Gone' });
      await patch(otherName.id, { name: 'Palm again', tag: 'gone' });
      await remove(otherTag.id);
    }, last);

    expect(seen(events)).toEqual([
      created(both.id, `"name":"${word} both","tag":"${tag}"`),
      updated(otherTag.id, `"name":"${word} other tag","tag":"${tag}"`),
      updated(otherName.id, `"name":"Palm ${word}","tag":"${tag}"`),
      updated(both.id, `"name":"${word} both","tag":"gone"`),
      updated(otherName.id, `"name":"Palm again","tag":"gone"`),
      deleted(otherTag.id),
      created(last.id, `"name":"${word} last","tag":"${tag}"`),
    ]);
  });
});

/** Makes one plant's events of a kind look as written before the previous names were kept (migrations 008/009). */
function forgetName(target: TestApp, id: unknown, kind: 'updated' | 'deleted'): void {
  const sql = `UPDATE plant_events SET ${kind === 'updated' ? 'prev_name' : 'name'} = NULL WHERE plant_id = ${id as number} AND kind = '${kind}'`;
  if (target.store === 'postgres') return runSql(target.dbPath, sql);
  const writer = new Database(target.dbPath);
  writer.exec(sql);
  writer.close();
}

describe('GET /plants/events?q= over events stored before the previous names were kept', () => {
  it('when an edit lacks the name it replaced or a delete the name it had, then a search stream carries them (more, never less)', async () => {
    const word = `fern${uniqueId()}`;
    const renamed = aNewPlant({ name: 'Alpha' });
    const gone = aNewPlant({ name: 'Beta' });
    const known = aNewPlant({ name: 'Gamma' });
    const last = aNewPlant({ name: `${word} last` });
    const live = await stream('/plants/events');
    const [first] = await live.waitFor((events) => events.length > 0);
    for (const plant of [renamed, gone, known]) await create(plant);
    await patch(renamed.id, { name: 'Alpha two' });
    await patch(known.id, { name: 'Gamma two' });
    await remove(gone.id);
    await create(last);
    await live.waitFor(carries(last.id));
    forgetName(app, renamed.id, 'updated');
    forgetName(app, gone.id, 'deleted');

    const resumed = await stream(`/plants/events?q=${word}`, { 'Last-Event-ID': first?.id as string });
    const events = await resumed.waitFor(carries(last.id));

    expect(seen(events)).toEqual([updated(renamed.id, '"name":"Alpha two","tag":"indoor"'), deleted(gone.id), created(last.id, `"name":"${word} last","tag":"indoor"`)]);
  });
});

describe('GET /plants/events?q= refused', () => {
  const refusal = (message: string, code: string) => ({ status: 400, body: { error: 40012, message: `q: ${message}`, fields: [{ field: 'q', code, message }] } });

  it.each([
    ['empty', 'q=', refusal('must have at least one non-whitespace character', 'too_short')],
    ['only spaces', 'q=%20%20', refusal('must have at least one non-whitespace character', 'blank')],
    ['repeated', 'q=fern&q=palm', refusal('must be given once', 'repeated')],
    ['over 100 code points', `q=${'🌿'.repeat(101)}`, refusal('must be at most 100 characters (Unicode code points)', 'too_long')],
  ])('when q is %s, then it answers 400 40012 naming q', async (_case, query, expected) => {
    const answer = await stream(`/plants/events?${query.replace(/🌿/g, encodeURIComponent('🌿'))}`);

    expect({ status: answer.status, body: answer.body }).toEqual(expected);
  });

  it('when q is exactly 100 code points, then the stream opens', async () => {
    const answer = await stream(`/plants/events?q=${encodeURIComponent('🌿'.repeat(100))}`);

    expect(answer.status).toBe(200);
  });
});
