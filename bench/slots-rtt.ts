/**
 * What a machine slot costs a worker at WORKERS above 1 (docs/performance/machine-slots.md): the supervisor's
 * slot table and the workers' port from the build (dist/supervisor), over node:cluster IPC with the serialization
 * the supervisor sets, each worker taking and giving back slots one after another (a keyed write's hold, a stream's
 * count). Prints one table row per worker count. Run: npm run build && npx tsc -p tsconfig.bench.json &&
 * node dist-bench/slots-rtt.js
 */
import cluster, { type Worker } from 'node:cluster';
import { performance } from 'node:perf_hooks';

type Release = () => void;
type Slots = { count(kind: string, max: number): Promise<Release | undefined>; hold(kind: string, name: string): Promise<Release | undefined> };
/* eslint-disable @typescript-eslint/no-require-imports -- the service's build, as it runs */
const { MachineSlotTable } = require('../dist/supervisor/slots') as { MachineSlotTable: new () => { received(worker: Worker, message: unknown): void } };
const { isSlotMessage } = require('../dist/supervisor/slot-messages') as { isSlotMessage: (message: unknown) => boolean };
const { workerSlots } = require('../dist/supervisor/worker-slots') as { workerSlots: () => Slots };
/* eslint-enable @typescript-eslint/no-require-imports */

const WARMUP = 2_000;
const TAKES = 20_000;
const WORKER_COUNTS = [1, 2, 4];

type Result = { kind: string; micros: number[] };

async function measure(slots: Slots, kind: 'hold' | 'count', n: number): Promise<number[]> {
  const micros: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const started = performance.now();
    const release = kind === 'hold' ? await slots.hold('key', `${process.pid}:${i}`) : await slots.count('streams', 1_000_000);
    micros.push((performance.now() - started) * 1000);
    release?.();
  }
  return micros;
}

async function worker(): Promise<void> {
  const slots = workerSlots();
  const results: Result[] = [];
  for (const kind of ['hold', 'count'] as const) {
    await measure(slots, kind, WARMUP);
    results.push({ kind, micros: await measure(slots, kind, TAKES) });
  }
  process.send?.({ type: 'done', results }, undefined, undefined, () => process.exit(0));
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

async function round(workers: number): Promise<Map<string, number[]>> {
  const table = new MachineSlotTable();
  const merged = new Map<string, number[]>();
  await Promise.all(
    Array.from({ length: workers }, () => {
      const forked = cluster.fork();
      return new Promise<void>((resolve) => {
        forked.on('message', (message: { type?: string; results?: Result[] }) => {
          if (isSlotMessage(message)) table.received(forked, message);
          else if (message.type === 'done') {
            for (const { kind, micros } of message.results ?? []) merged.set(kind, [...(merged.get(kind) ?? []), ...micros]);
            resolve();
          }
        });
      });
    }),
  );
  return merged;
}

async function primary(): Promise<void> {
  cluster.setupPrimary({ serialization: 'advanced' });
  console.log('| workers | slot | takes | mean µs | p50 µs | p99 µs |');
  console.log('|---:|---|---:|---:|---:|---:|');
  for (const workers of WORKER_COUNTS) {
    for (const [kind, micros] of await round(workers)) {
      const sorted = [...micros].sort((a, b) => a - b);
      const mean = micros.reduce((sum, value) => sum + value, 0) / micros.length;
      console.log(`| ${workers} | ${kind} | ${micros.length} | ${mean.toFixed(0)} | ${quantile(sorted, 0.5).toFixed(0)} | ${quantile(sorted, 0.99).toFixed(0)} |`);
    }
  }
}

void (cluster.isPrimary ? primary() : worker());
