import { aNewPlant } from '../helpers/plants';
import { postPlant, startTestApp, type TestApp } from '../helpers/test-app';

let app: TestApp;

beforeAll(async () => {
  // Well above the stalls a busy CI machine causes by itself, well below the stall the tests make.
  app = await startTestApp({ LOAD_SHED_LAG_MS: '300' });
});

afterAll(async () => {
  await app.close();
});

// The app shares this process's event loop, so holding the loop here is the overload it sees.
async function afterBusyLoop(ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else runs
  }
  await new Promise((resolve) => setTimeout(resolve, 30));
}

describe('load shedding', () => {
  it('when the event loop has run later than LOAD_SHED_LAG_MS, then a create gets 503 with Retry-After and nothing is stored', async () => {
    const plant = aNewPlant();
    await afterBusyLoop(1000);

    const response = await postPlant(app, plant);

    expect({ status: response.status, retryAfter: response.headers['retry-after'], body: response.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { error: 50303, message: 'The service is over capacity; retry after the number of seconds in Retry-After.' },
    });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await postPlant(app, { ...plant, name: 'proves the first was not stored' })).status).toBe(200);
  });

  it('when the event loop is late, then health checks still answer', async () => {
    await afterBusyLoop(1000);

    const health = await app.request.get('/healthz');

    expect(health.status).toBe(200);
  });

  it('when the loop has been on time for as long as it was late, then creates are admitted again', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2500));

    const response = await postPlant(app, aNewPlant());

    expect(response.status).toBe(200);
  });
});
