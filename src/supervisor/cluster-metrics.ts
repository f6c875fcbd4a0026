/**
 * One scrape on METRICS_PORT at WORKERS > 1 (docs/decisions/workers.md, D8): the supervisor serves the listener,
 * asks every live worker for its series over IPC and merges them with prom-client's AggregatorRegistry.aggregate
 * (each metric by its `aggregator`: sums, except the webhook backlog read from the one shared table, `max`). A
 * worker that has not answered within WORKER_REPLY_MS is left out of that scrape rather than fail it. The
 * supervisor adds its own series: the workers it restarted. Loaded only when metrics are on: prom-client stays out
 * of a supervisor without them.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, prometheusContentType } from 'prom-client';
import { serveMetrics, type MetricsServer } from '../metrics/metrics-listener';
import type { MetricsReply, MetricsRequest } from './messages';

const WORKER_REPLY_MS = 2000;

export class ClusterMetrics {
  private last = 0;
  private restarts = 0;
  private readonly waiting = new Map<number, (reply: MetricsReply) => void>();

  constructor(private readonly workers: () => Worker[]) {}

  /** Serves the merged scrape on METRICS_PORT; rejects with a message naming METRICS_PORT when it cannot listen. */
  serve(where: { host: string; port: number }): Promise<MetricsServer> {
    return serveMetrics({ contentType: prometheusContentType, metrics: () => this.merged() }, where);
  }

  /** The supervisor forked a worker again after one exited. */
  restarted(): void {
    this.restarts += 1;
  }

  /** A worker's reply to a scrape's request. */
  received(reply: MetricsReply): void {
    this.waiting.get(reply.id)?.(reply);
  }

  private async merged(): Promise<string> {
    const workers = this.workers();
    const id = (this.last += 1);
    const replies: object[][] = [];
    await new Promise<void>((resolve) => {
      let pending = workers.length;
      const finish = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(finish, WORKER_REPLY_MS);
      this.waiting.set(id, (reply) => {
        replies.push(reply.metrics);
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
    const own = {
      name: 'plants_worker_restarts_total',
      help: 'Workers the supervisor forked again after one exited (WORKERS above 1).',
      type: 'counter',
      aggregator: 'sum',
      values: [{ value: this.restarts, labels: {} }],
    };
    return AggregatorRegistry.aggregate([...replies, [own]]).metrics();
  }
}
