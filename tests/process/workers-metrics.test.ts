import { sleep } from '../helpers/common';
import { scrape, valueOf, type Scrape } from '../helpers/metrics';
import { describeWith } from '../helpers/optional-services';
import { aNewPlant } from '../helpers/plants';
import { freePort } from '../helpers/ports';
import { childPids, JSON_HEADERS, onNewConnection, waitForLines, workersForEach } from '../helpers/workers';

const CREATED = { method: 'POST', route: '/plants', status_code: '200' };

/** Scrapes until no request is in flight: a request is counted when its response closes, a moment after the client read it. */
async function settledScrape(url: string): Promise<Scrape> {
  let scraped = await scrape(url);
  for (let attempt = 0; attempt < 50 && valueOf(scraped, 'http_requests_in_flight') !== 0; attempt += 1) {
    await sleep(20);
    scraped = await scrape(url);
  }
  return scraped;
}

describeWith('postgres', 'metrics at WORKERS=2 on PostgreSQL', (server) => {
  const workers = workersForEach(server);

  it('when creates are spread over both workers, then one scrape on METRICS_PORT counts every one of them, and the supervisor serves it', async () => {
    const port = await freePort();
    const service = await workers.start({ METRICS_PORT: String(port) });
    const url = `http://127.0.0.1:${port}/metrics`;

    const created = await Promise.all(Array.from({ length: 10 }, () => onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(aNewPlant()) })));
    await sleep(300);
    const scraped = await settledScrape(url);
    const servedBy = new Set(service.lines.filter((line) => line.msg === 'request' && line.method === 'POST').map((line) => line.worker));

    expect(created.map((response) => response.status)).toEqual(Array(10).fill(200));
    expect(servedBy).toEqual(new Set([1, 2]));
    expect(scraped.status).toBe(200);
    expect(valueOf(scraped, 'http_request_duration_seconds_count', CREATED)).toBe(10);
    expect(valueOf(scraped, 'plants_worker_restarts_total')).toBe(0);
    expect(service.lines.find((line) => line.msg === 'metrics listening')).toEqual(expect.objectContaining({ url }));
    expect(service.lines.find((line) => line.msg === 'metrics listening')).not.toHaveProperty('worker');
  });

  it('when a worker is killed and replaced, then the scrape still answers, counts the restart, and its counters keep what the dead worker had served', async () => {
    const port = await freePort();
    const service = await workers.start({ METRICS_PORT: String(port) });
    const url = `http://127.0.0.1:${port}/metrics`;
    const before = await Promise.all(Array.from({ length: 10 }, () => onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(aNewPlant()) })));
    const counted = valueOf(await settledScrape(url), 'http_request_duration_seconds_count', CREATED);
    const [pid] = childPids(service.child.pid ?? 0);
    await waitForLines(service, (line) => line.msg === 'request' && line.method === 'POST', 10);
    const servedBy = new Set(service.lines.filter((line) => line.msg === 'request' && line.method === 'POST').map((line) => line.worker));

    process.kill(pid ?? 0, 'SIGKILL');
    await waitForLines(service, (line) => line.msg === 'worker listening', 3, 20_000);
    const created = await onNewConnection(service.url, { headers: JSON_HEADERS, body: JSON.stringify(aNewPlant()) });
    const scraped = await settledScrape(url);

    expect(before.map((response) => response.status)).toEqual(Array(10).fill(200));
    // Both workers served creates before the kill, so whichever dies had counted some.
    expect(servedBy).toEqual(new Set([1, 2]));
    expect(counted).toBe(10);
    expect(created.status).toBe(200);
    expect(scraped.status).toBe(200);
    // Not 1: the dead worker's creates stay counted (a counter that dropped would read as a reset).
    expect(valueOf(scraped, 'http_request_duration_seconds_count', CREATED)).toBe(11);
    expect(valueOf(scraped, 'plants_worker_restarts_total')).toBe(1);
  });
});
