/**
 * One scrape on METRICS_PORT at WORKERS > 1 (docs/decisions/workers.md, D8): the supervisor serves the listener,
 * asks every live worker for its series over IPC and merges them with prom-client's AggregatorRegistry.aggregate
 * (each metric by its `aggregator`: sums, except the webhook backlog read from the one shared table, `max`).
 * Counters never go back (Prometheus would read a drop as a reset): a worker that has not answered within
 * WORKER_REPLY_MS counts with its last reply rather than fail the scrape, and a worker that exits leaves its last
 * reply's counters and histograms in a retired sum the merge keeps adding. What it counted after its last scrape
 * was never served and is lost. The supervisor adds its own series: the workers it restarted. Loaded only when
 * metrics are on: prom-client stays out of a supervisor without them.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, prometheusContentType, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { serveMetrics, type MetricsServer } from '../metrics/metrics-listener';
import type { MetricsReply, MetricsRequest } from './messages';

const WORKER_REPLY_MS = 2000;

type Series = MetricObjectWithValues<MetricValue<string>>;
// Series that only grow: what an exited worker counted stays in the sum. Gauges describe live workers only.
const cumulative = (series: object[]) => (series as Series[]).filter((metric) => ['counter', 'histogram'].includes(String(metric.type)));

export class ClusterMetrics {
  private last = 0;
  private restarts = 0;
  private readonly waiting = new Map<number, () => void>();
  /** Each live worker's last reply, by cluster worker id. */
  private readonly lastReplies = new Map<number, object[]>();
  /** The counters and histograms of the workers that exited, summed; changes are chained so none is lost. */
  private retired: Promise<object[]> = Promise.resolve([]);

  constructor(private readonly workers: () => Worker[]) {}

  /** Serves the merged scrape on METRICS_PORT; rejects with a message naming METRICS_PORT when it cannot listen. */
  serve(where: { host: string; port: number }): Promise<MetricsServer> {
    return serveMetrics({ contentType: prometheusContentType, metrics: () => this.merged() }, where);
  }

  /** The supervisor forked a worker again after one exited. */
  restarted(): void {
    this.restarts += 1;
  }

  /** A worker's reply to a scrape's request (a late one still updates what the next scrape counts for it). */
  received(workerId: number, reply: MetricsReply): void {
    this.lastReplies.set(workerId, reply.metrics);
    this.waiting.get(reply.id)?.();
  }

  /** A worker exited: its last counts join the retired sum. */
  retire(workerId: number): void {
    const last = this.lastReplies.get(workerId);
    this.lastReplies.delete(workerId);
    if (last === undefined) return;
    this.retired = this.retired.then((retired) => AggregatorRegistry.aggregate([retired, cumulative(last)]).getMetricsAsJSON());
  }

  private async merged(): Promise<string> {
    const workers = this.workers();
    await this.ask(workers);
    const replies = workers.flatMap((worker) => {
      const last = this.lastReplies.get(worker.id);
      return last === undefined ? [] : [last];
    });
    const own = {
      name: 'plants_worker_restarts_total',
      help: 'Workers the supervisor forked again after one exited (WORKERS above 1).',
      type: 'counter',
      aggregator: 'sum',
      values: [{ value: this.restarts, labels: {} }],
    };
    return AggregatorRegistry.aggregate([...replies, await this.retired, [own]]).metrics();
  }

  /** Asks every live worker for its series; resolves when all answered or after WORKER_REPLY_MS. */
  private ask(workers: Worker[]): Promise<void> {
    const id = (this.last += 1);
    return new Promise<void>((resolve) => {
      let pending = workers.length;
      const finish = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(finish, WORKER_REPLY_MS);
      this.waiting.set(id, () => {
        pending -= 1;
        if (pending === 0) finish();
      });
      const request: MetricsRequest = { type: 'metrics', id };
      for (const worker of workers) {
        if (worker.isConnected()) worker.send(request, () => undefined);
        else pending -= 1;
      }
      if (pending === 0) finish();
    });
  }
}
