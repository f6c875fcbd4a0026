// The new-plant webhook: creates/s with one subscriber (a local receiver answering 200) and with the
// subscriber down, each against no webhook in the same run; commit-to-delivery lag at half the measured create
// rate; and how fast a backlog drains once the subscriber is back.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { alternate, f0, f1, f2, failures, freePort, freshStore, load, measure, measureRunning, median, met, row, SECONDS, start, TABLE_HEAD, TOKEN, WARMUP_SECONDS, type SectionResult, throughputRatio } from './lib';

const SECRET = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;

/** A subscriber in this process: answers 200 at once and notes when each plant id arrived. */
async function startReceiver(port = 0) {
  const arrivals = new Map<string, number>();
  // Wall-clock arrival, comparable with the outbox's own timestamps (created_at, the attempt's updated_at).
  const arrivedAt = new Map<string, number>();
  let count = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      count += 1;
      const id = /"id":(-?\d+)/.exec(body)?.[1];
      if (id !== undefined && !arrivals.has(id)) {
        arrivals.set(id, performance.now());
        arrivedAt.set(id, Date.now());
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    arrivedAt,
    count: () => count,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let nextLagId = 20_000_000_000;

type Lag = { lags: number[]; fromSend: number[]; missing: number; failed: number };

/**
 * Creates at a fixed rate for `seconds`. A create commits before its 200 leaves the server, so arrival minus
 * the 200's arrival here is the commit-to-delivery lag, slightly under (by the response's trip); arrival minus
 * the send adds the create's own latency, an upper bound.
 */
async function pacedLag(port: number, rate: number, seconds: number, arrivals: Map<string, number>): Promise<Lag> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 50 });
  const sentAt = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  const pending: Promise<void>[] = [];
  let failed = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    while (sentAt.size < due) {
      nextLagId += 1;
      const id = String(nextLagId);
      sentAt.set(id, performance.now());
      pending.push(
        pool
          .request({
            method: 'POST',
            path: '/plants',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: `{"id":${id},"name":"Lag ${id}"}`,
          })
          .then(async (response) => {
            answeredAt.set(id, performance.now());
            if (response.statusCode !== 200) failed += 1;
            await response.body.dump();
          }),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(pending);
  const deadline = performance.now() + 10_000;
  while ([...sentAt.keys()].some((id) => !arrivals.has(id)) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  await pool.close();
  const delivered = [...sentAt].filter(([id]) => arrivals.has(id));
  const sorted = (values: number[]) => values.sort((a, b) => a - b);
  return {
    lags: sorted(delivered.map(([id]) => (arrivals.get(id) ?? 0) - (answeredAt.get(id) ?? 0))),
    fromSend: sorted(delivered.map(([id, at]) => (arrivals.get(id) ?? 0) - at)),
    missing: sentAt.size - delivered.length,
    failed,
  };
}

/**
 * Where the lag goes, from the outbox's own timestamps (created_at in the plant's transaction, updated_at the
 * start of the delivering attempt) and the receiver's wall-clock arrival: time the dispatcher made an event
 * wait versus time between its send and the receiver seeing it (the wire and the receiver's own process).
 */
function lagSplit(storeUrl: string, arrivedAt: Map<string, number>, since: number) {
  const db = new Database(storeUrl.slice('file:'.length), { readonly: true });
  const rows = db
    .prepare("SELECT CAST(plant_id AS TEXT) AS id, created_at, updated_at FROM webhook_outbox WHERE status = 'delivered' AND attempts = 1 AND created_at >= ?")
    .all(since) as { id: string; created_at: number; updated_at: number }[];
  db.close();
  const toAttempt: number[] = [];
  const toReceiver: number[] = [];
  const total: number[] = [];
  // The worst wait of each second of the run: a lag that is there from the start and stays, versus one that grows.
  const first = Math.min(...rows.map((row) => row.created_at));
  const worstBySecond: number[] = [];
  for (const row of rows) {
    const second = Math.floor((row.created_at - first) / 1000);
    worstBySecond[second] = Math.max(worstBySecond[second] ?? 0, row.updated_at - row.created_at);
    const arrived = arrivedAt.get(row.id);
    if (arrived === undefined) continue;
    toAttempt.push(row.updated_at - row.created_at);
    toReceiver.push(arrived - row.updated_at);
    total.push(arrived - row.created_at);
  }
  const at = (values: number[]) => {
    values.sort((a, b) => a - b);
    return (q: number) => values[Math.min(values.length - 1, Math.floor(values.length * q))] ?? NaN;
  };
  return { toAttempt: at(toAttempt), toReceiver: at(toReceiver), total: at(total), worstBySecond };
}

/** The pending events of a running service's outbox, read on a connection of this process's own. */
function backlogOf(storeUrl: string): { events: number; oldestMs: number } {
  const db = new Database(storeUrl.slice('file:'.length), { readonly: true });
  const { events, oldest } = db.prepare("SELECT count(*) AS events, min(created_at) AS oldest FROM webhook_outbox WHERE status = 'pending'").get() as {
    events: number;
    oldest: number | null;
  };
  db.close();
  return { events, oldestMs: oldest === null ? 0 : Date.now() - oldest };
}

/** Creates with the subscriber down, then a restart with it up and every pending event due: events/s sent. */
async function drainRate(down: Record<string, string>, port: number): Promise<{ events: number; perSecond: number }> {
  const url = freshStore('webhooks-drain');
  const server = await start('service', url, down);
  await load(server.port, SECONDS);
  await server.stop();
  const db = new Database(url.slice('file:'.length));
  const events = Number(db.prepare("SELECT count(*) AS n FROM webhook_outbox WHERE status = 'pending'").pluck().get());
  // Due now, so the drain measures the dispatcher, not the retry schedule's spread.
  db.prepare("UPDATE webhook_outbox SET next_attempt_at = 0 WHERE status = 'pending'").run();
  db.close();
  const receiver = await startReceiver(port);
  const restarted = await start('service', url, down);
  const from = performance.now();
  const deadline = from + 300_000;
  while (receiver.arrivals.size < events && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const seconds = (performance.now() - from) / 1000;
  await restarted.stop();
  await receiver.close();
  return { events, perSecond: receiver.arrivals.size / seconds };
}

export async function webhooksSection(): Promise<SectionResult> {
  const receiver = await startReceiver();
  const downPort = await freePort();
  const one = { WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: SECRET };
  const down = { WEBHOOK_URLS: `http://127.0.0.1:${downPort}/hooks`, WEBHOOK_SECRET: SECRET };
  const deliveredPerSecond: number[] = [];
  // The outbox as the load ends, before the server stops: events waiting and the age of the oldest.
  const backlogs: { events: number; oldestMs: number }[] = [];
  const { medians, runs } = await alternate({
    none: () => measure('service', freshStore('webhooks-none')),
    subscriber: async () => {
      // What the subscriber received while creates ran flat out: how far deliveries kept up with creates when both
      // compete for the one core. Counted from start to stop, so the second or so before the first create and the
      // drain after the last make the rate a little low.
      const before = receiver.count();
      const started = performance.now();
      const store = freshStore('webhooks-one');
      const server = await start('service', store, one);
      try {
        const figures = await measureRunning(server);
        backlogs.push(backlogOf(store));
        deliveredPerSecond.push((receiver.count() - before) / ((performance.now() - started) / 1000));
        return figures;
      } finally {
        await server.stop();
      }
    },
    down: () => measure('service', freshStore('webhooks-down'), { env: down }),
  });

  const rate = Math.max(1, Math.round(medians.subscriber.rps / 2));
  const lagStore = freshStore('webhooks-lag');
  const lagServer = await start('service', lagStore, one);
  // Warmed up at the same rate first, as every other measurement is, and measured once the warm-up's events
  // have all arrived: a cold process at this rate falls behind in its first seconds and catches up after.
  await pacedLag(lagServer.port, rate, WARMUP_SECONDS, receiver.arrivals);
  const measuredFrom = Date.now();
  const lag = await pacedLag(lagServer.port, rate, SECONDS, receiver.arrivals);
  await lagServer.stop();
  const split = lagSplit(lagStore, receiver.arrivedAt, measuredFrom);
  await receiver.close();
  const quantile = (values: number[], q: number) => values[Math.min(values.length - 1, Math.floor(values.length * q))] ?? NaN;
  const p = (q: number) => quantile(lag.lags, q);
  console.error(
    `webhooks lag at ${rate} creates/s: 200-to-delivery p50 ${f1(p(0.5))} ms, p99 ${f1(p(0.99))} ms; send-to-delivery p99 ${f1(quantile(lag.fromSend, 0.99))} ms; ${lag.missing} not delivered, ${lag.failed} creates not 200`,
  );

  console.error(
    `webhooks lag split (p50/p99 ms, wall clock): commit to attempt start ${f1(split.toAttempt(0.5))}/${f1(split.toAttempt(0.99))}, attempt start to receiver ${f1(split.toReceiver(0.5))}/${f1(split.toReceiver(0.99))}, commit to receiver ${f1(split.total(0.5))}/${f1(split.total(0.99))}; worst commit to attempt start by second of the run ${split.worstBySecond.join(', ')}`,
  );

  const drain = await drainRate(down, downPort);
  console.error(`webhooks drain: ${drain.events} events at ${f0(drain.perSecond)} events/s`);

  const lines = [
    `### Webhooks: creates with one subscriber (a local receiver answering 200), with it down, and without webhooks; medians of alternating rounds`,
    '',
    ...TABLE_HEAD,
    row('service, no webhook', medians.none),
    row('service, one subscriber', medians.subscriber),
    row('service, subscriber down (default retry schedule)', medians.down),
    '',
    '| measure | value | goal | met |',
    '|---|---:|---|---|',
    `| creates/s, one subscriber / none | ${throughputRatio(runs.subscriber, runs.none)} | ≥ 0.85 | ${met(medians.subscriber.rps / medians.none.rps >= 0.85)} |`,
    `| deliveries/s received meanwhile (creates at full speed, one core for both); backlog as the load ended: events waiting, oldest | ${f0(median(deliveredPerSecond))} (${f0((100 * median(deliveredPerSecond)) / medians.subscriber.rps)}% of the creates); ${f0(median(backlogs.map((b) => b.events)))} events, oldest ${f2(median(backlogs.map((b) => b.oldestMs)) / 1000)} s | ≥ 10% of the creates | ${met(median(deliveredPerSecond) >= medians.subscriber.rps / 10)} |`,
    `| commit-to-delivery p99 at ${rate} creates/s (half the rate): the 200 to the delivery's arrival | ${f1(p(0.99))} ms (p50 ${f1(p(0.5))}; from the send, p99 ${f1(quantile(lag.fromSend, 0.99))}; ${lag.missing} of ${lag.lags.length + lag.missing} not delivered) | < 1 s | ${met(p(0.99) < 1000 && lag.missing === 0)} |`,
    `| where it went: commit to attempt start / attempt start to receiver, p99 (the outbox's timestamps) | ${f1(split.toAttempt(0.99))} / ${f1(split.toReceiver(0.99))} ms | measured | |`,
    `| creates/s, subscriber down / none | ${throughputRatio(runs.down, runs.none)} | ≥ 0.90 | ${met(medians.down.rps / medians.none.rps >= 0.9)} |`,
    `| backlog drain with no requests, after the subscriber is back (${drain.events} events, all due) | ${f0(drain.perSecond)} events/s | ≥ 5,000 | ${met(drain.perSecond >= 5000)} |`,
    '',
  ];
  const loadFailures = { none: failures(...runs.none), subscriber: failures(...runs.subscriber), down: failures(...runs.down) };
  console.error(`webhooks: creates not 2xx or errored: ${JSON.stringify(loadFailures)}`);
  return { lines, failed: loadFailures.none + loadFailures.subscriber + loadFailures.down + lag.failed + lag.missing };
}
