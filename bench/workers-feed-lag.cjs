// Feed delivery lag across workers (issue 36): opens STREAMS change streams on new connections (the supervisor hands
// them to the workers in turn), reads every event for SECONDS, and prints one JSON line: per event, how long after
// its commit's timestamp (the plant's createdAt, taken before the commit) the last and the first stream got it, as
// p50, p99 and max in ms, with the events seen by every stream. Load is the caller's (wrk).
// Usage: node bench/workers-feed-lag.cjs <base url> <token> [streams=4] [seconds=10]
const http = require('node:http');
const { setTimeout: sleep } = require('node:timers/promises');

const [url, token, streams = '4', seconds = '10'] = process.argv.slice(2);
const arrivals = new Map(); // event id → { at: createdAt ms, seen: [Date.now() per stream] }

function open(index) {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/plants/events`, { headers: { Authorization: `Bearer ${token}`, Connection: 'close' } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream ${index}: ${response.statusCode}`));
      let buffer = '';
      response.setEncoding('utf8').on('data', (chunk) => {
        const now = Date.now();
        buffer += chunk;
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const data = /^data: (.*)$/m.exec(block)?.[1];
          const id = /^id: (.*)$/m.exec(block)?.[1];
          if (data === undefined || id === undefined) continue;
          const entry = arrivals.get(id) ?? { at: Date.parse(JSON.parse(data).createdAt), seen: [] };
          entry.seen.push(now);
          arrivals.set(id, entry);
        }
      });
      resolve(request);
    });
    request.on('error', reject);
  });
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

async function main() {
  const requests = [];
  for (let index = 0; index < Number(streams); index += 1) requests.push(await open(index));
  await sleep(Number(seconds) * 1000);
  for (const request of requests) request.destroy();
  const complete = [...arrivals.values()].filter((entry) => entry.seen.length === Number(streams));
  const round = (value) => Math.round(value * 10) / 10;
  const summary = (pick) => {
    const lags = complete.map((entry) => pick(entry.seen) - entry.at).sort((a, b) => a - b);
    return { p50: round(quantile(lags, 0.5)), p99: round(quantile(lags, 0.99)), max: round(lags.at(-1)) };
  };
  // last: the slowest stream (at WORKERS above 1, a worker other than the committing one); first: the fastest.
  const figures = { events: arrivals.size, seenByEvery: complete.length, last: summary((seen) => Math.max(...seen)), first: summary((seen) => Math.min(...seen)) };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
