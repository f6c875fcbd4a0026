import { bearer } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll();

const EMPTY_ID = "is empty; send /plants/{id} with the plant's id, or GET /plants to list.";

describe('/plants/ (an empty id)', () => {
  it.each([
    ['GET', () => app.request.get('/plants/').set(bearer())],
    ['DELETE', () => app.request.delete('/plants/').set(bearer())],
    ['PATCH', () => app.request.patch('/plants/').set({ ...bearer(), 'Content-Type': 'application/merge-patch+json' }).send('{"name":"Fern"}')],
    ['PUT', () => app.request.put('/plants/').set({ ...bearer(), 'Content-Type': 'application/json' }).send('{"name":"Fern"}')],
    ['PATCH with a body that is not JSON', () => app.request.patch('/plants/').set({ ...bearer(), 'Content-Type': 'application/json' }).send('{"name":')],
  ])('when %s is sent, then it answers 400 40012 naming id', async (_method, send) => {
    const response = await send();

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { error: 40012, message: `id: ${EMPTY_ID}`, fields: [{ field: 'id', code: 'required', message: EMPTY_ID }] },
    });
  });

  it('when PATCH or PUT goes to /plants, then they stay 405 with the Allow of their path', async () => {
    const answers = await Promise.all([
      app.request.patch('/plants').set({ ...bearer(), 'Content-Type': 'application/json' }).send('{}'),
      app.request.put('/plants').set({ ...bearer(), 'Content-Type': 'application/json' }).send('{}'),
    ]);

    expect(answers.map((answer): unknown[] => [answer.status, answer.headers.allow, answer.body.error])).toEqual([
      [405, 'GET, HEAD, POST, OPTIONS', 40501],
      [405, 'GET, HEAD, POST, OPTIONS', 40501],
    ]);
  });
});
