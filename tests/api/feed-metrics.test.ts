import { scrape, valueOf } from '../helpers/metrics';
import { aNewPlant } from '../helpers/plants';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { openStream } from '../helpers/sse';
import { testWorkers } from '../helpers/test-workers';

// Metrics on: the instruments under test live on the metrics listener.
const app = appForAll({ METRICS_PORT: '9464' });

describe('change feed metrics', () => {
  it('when two streams read three creates and one closes, then open streams, events sent and the lag histogram say so', async () => {
    const readers = await Promise.all([1, 2].map(() => openStream(app.url, '/plants/events', bearer())));
    const plants = [aNewPlant(), aNewPlant(), aNewPlant()];
    for (const plant of plants) await postPlant(app, plant);
    const last = plants.at(-1)?.id as number;
    await Promise.all(readers.map((reader) => reader.waitFor((events) => events.some((event) => event.data?.startsWith(`{"id":${last},`) === true))));

    const open = await scrape(app.metricsUrl ?? '');
    readers[0]?.close();
    await readers[0]?.ended;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const afterClose = await scrape(app.metricsUrl ?? '');
    readers[1]?.close();

    expect({
      open: valueOf(open, 'plants_feed_streams_open'),
      sent: valueOf(open, 'plants_feed_events_sent_total'),
      cutOff: valueOf(open, 'plants_feed_streams_cut_off_total'),
      openAfterClose: valueOf(afterClose, 'plants_feed_streams_open'),
    }).toEqual({ open: 2, sent: 6, cutOff: 0, openAfterClose: 1 });
    // The lag is observed by each process whose feed reads the event for its streams: one process at one worker;
    // above one, the one or two workers the two streams landed on.
    expect(testWorkers() > 1 ? [3, 6] : [3]).toContain(valueOf(open, 'plants_feed_lag_seconds_count'));
  });
});
