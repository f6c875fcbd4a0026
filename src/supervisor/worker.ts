/**
 * A worker's side of the supervisor (src/supervisor/primary.ts): which slot it fills, the start line's facts sent
 * up once it listens, and the drain the supervisor asks for, by its deadline. A worker whose supervisor is gone
 * (its IPC channel closed: the supervisor was killed) exits at once rather than serve unsupervised, and first
 * calls `orphaned`: its stdout went with the supervisor.
 */
import type { AddressInfo } from 'node:net';
import { isDrainMessage, isMetricsMessage, WORKER_SLOT_VARIABLE, type ListeningMessage, type MetricsReply } from './messages';

export { GENERATED_TOKEN_VARIABLE } from './messages';

/** This process's slot (1..WORKERS) when a supervisor forked it. */
export function workerSlot(env: NodeJS.ProcessEnv): number | undefined {
  const slot = env[WORKER_SLOT_VARIABLE];
  return slot === undefined ? undefined : Number(slot);
}

export type Listening = {
  address: AddressInfo;
  connections: { maxConnections: number; openFileLimit: number | undefined };
  metricsJson: (() => Promise<object[]>) | undefined;
};

/**
 * Follows the supervisor from the worker's start: `drain` is called for its drain message, `orphaned` when the
 * channel closes, and a scrape's request is answered with this worker's series. The returned function
 * sends the start line's facts up once the worker listens.
 */
export function followSupervisor(drain: (signal: NodeJS.Signals | undefined, deadline?: number) => void, orphaned: () => void): (service: Listening) => void {
  let series: () => Promise<object[]> = () => Promise.resolve([]);
  process.on('message', (message: unknown) => {
    if (isDrainMessage(message)) drain(message.signal, message.deadline);
    else if (isMetricsMessage(message)) void answerScrape(message.id, series);
  });
  // node:cluster ends a worker at once (exit 0) when its channel closes, the supervisor being gone: before that,
  // stdout, which only the supervisor read, is given up, or the exit's synchronous log flush would retry EPIPE forever.
  process.prependListener('disconnect', orphaned);
  return (service) => {
    if (service.metricsJson !== undefined) series = service.metricsJson;
    const listening: ListeningMessage = { type: 'listening', address: service.address.address, port: service.address.port, ...service.connections };
    process.send?.(listening);
  };
}

async function answerScrape(id: number, series: () => Promise<object[]>): Promise<void> {
  let metrics: object[] = [];
  try {
    metrics = await series();
  } catch {
    // A collect that failed leaves this worker out of one scrape rather than fail it.
  }
  const reply: MetricsReply = { type: 'metrics', id, metrics };
  if (process.connected) process.send?.(reply);
}
