// What metrics cost: POST /plants with METRICS_PORT=0 against the same service with metrics on and Prometheus
// scraping it every SCRAPE_SECONDS during the run (more often than a usual 15 s, so the cost is not flattered).
import { alternate, f0, f1, f2, failures, freePort, freshStore, measure, measureRunning, ROUNDS, row, SECONDS, start, TABLE_HEAD, type Figures, type SectionResult, throughputRatio } from './lib';

const SCRAPE_SECONDS = 2;

let scrapes = 0;
let failedScrapes = 0;

async function withMetrics(): Promise<Figures> {
  const metricsPort = await freePort();
  const server = await start('service', freshStore('metrics-on'), { METRICS_PORT: String(metricsPort) });
  const timer = setInterval(() => {
    fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      .then(async (response) => {
        await response.text();
        if (response.ok) scrapes += 1;
        else failedScrapes += 1;
      })
      .catch(() => {
        failedScrapes += 1;
      });
  }, SCRAPE_SECONDS * 1000);
  try {
    return await measureRunning(server);
  } finally {
    clearInterval(timer);
    await server.stop();
  }
}

export async function metricsSection(): Promise<SectionResult> {
  const { medians, runs } = await alternate({
    off: () => measure('service', freshStore('metrics-off')),
    on: withMetrics,
  });
  const { off, on } = medians;
  console.error(`metrics: on/off ${f2(on.rps / off.rps)}, CPU ${f0(on.cpuPerRequestUs)} vs ${f0(off.cpuPerRequestUs)} µs/req; ${scrapes} scrapes, ${failedScrapes} failed`);
  const lines = [
    `### Metrics (POST /plants): off (METRICS_PORT=0) against on, scraped every ${SCRAPE_SECONDS} s; ${SECONDS} s runs, medians of ${ROUNDS} alternating rounds`,
    '',
    ...TABLE_HEAD,
    row('service, metrics off', off),
    row(`service, metrics on, scraped every ${SCRAPE_SECONDS} s`, on),
    '',
    '| ratio | value | goal |',
    '|---|---:|---|',
    `| metrics on / off throughput | ${throughputRatio(runs.on, runs.off)} | ≥ 0.95 |`,
    `| extra CPU per request with metrics | ${f1(on.cpuPerRequestUs - off.cpuPerRequestUs)} µs | |`,
    `| scrapes answered / failed | ${scrapes} / ${failedScrapes} | all answered |`,
    '',
  ];
  return { lines, failed: failures(...runs.off, ...runs.on) + failedScrapes };
}
