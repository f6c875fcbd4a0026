/**
 * The supervisor at WORKERS > 1 (docs/decisions/workers.md): forks the workers through node:cluster, which hands
 * them connections in turn (round-robin: the supervisor holds the port), relays their log lines, restarts one that
 * exits (src/supervisor/restarts.ts), forwards SIGHUP, and on SIGTERM or SIGINT drains them all by one deadline and
 * exits with the worst code. It must never load the service (express, pg): every request is a worker's.
 */
import cluster, { type Worker } from 'node:cluster';
import { GENERATED_TOKEN_WARNING, type Config } from '../config';
import type { Logger } from '../logger';
import { relayLines } from './log-relay';
import type { MetricsServer } from '../metrics/metrics-listener';
import type { ClusterMetrics } from './cluster-metrics';
import { GENERATED_TOKEN_VARIABLE, WORKER_SLOT_VARIABLE, isListeningMessage, isMetricsMessage, type DrainMessage, type ListeningMessage, type MetricsReply } from './messages';
import { isCreditMessage, RateCredits } from './rate-credits';
import { Restarts } from './restarts';
import { isSlotMessage } from './slot-messages';
import { isCommitNotice } from './commit-messages';
import { Leadership, relayCommit } from './commits';
import { MachineSlotTable } from './slots';
import { firstForks } from './sqlite-start';
import { isWriteTurnMessage, WriteTurnTable } from './write-turn';

// Past the drain's deadline a worker gets this long to exit on its own before SIGKILL.
const KILL_GRACE_MS = 1000;
// The supervisor waits this long at most for a worker's last log lines once every worker has exited.
const RELAY_GRACE_MS = 1000;

type Slot = { n: number; worker?: Worker; forkedAt: number; listened: boolean; restart?: NodeJS.Timeout };

export type PrimaryOptions = {
  config: Pick<Config, 'workers' | 'shutdownTimeoutMs' | 'authTokens' | 'tokenSource' | 'metricsPort' | 'metricsHost' | 'database'>;
  logger: Logger;
  /** Writes workers' complete lines into the supervisor's stdout (src/logger.ts createRelayingLogger). */
  relay: (lines: Buffer) => void;
  exit: (code: number) => void;
};

export function runPrimary(options: PrimaryOptions): void {
  cluster.schedulingPolicy = cluster.SCHED_RR;
  // silent: each worker's stdout and stderr are pipes to here, so their lines reach stdout whole. advanced: a
  // metric's NaN (unknown) crosses IPC as NaN, not as JSON's null.
  cluster.setupPrimary({ silent: true, serialization: 'advanced' });
  const supervisor = new Supervisor(options);
  // A listener is called with the signal's number too, which is no exit code.
  process.on('SIGTERM', (signal) => supervisor.shutdown(signal));
  process.on('SIGINT', (signal) => supervisor.shutdown(signal));
  process.on('SIGHUP', () => supervisor.hangup());
  void supervisor.start();
}

class Supervisor {
  private readonly restarts: Restarts;
  private readonly slots: Slot[];
  private readonly relays = new Set<Promise<void>>();
  private readonly machineSlots = new MachineSlotTable();
  private readonly writeTurn = new WriteTurnTable();
  private readonly leadership = new Leadership(() => this.stopping);
  private readonly token: string | undefined;
  private serving = false;
  private stopping = false;
  private worst = 0;
  private killer: NodeJS.Timeout | undefined;
  private metrics: { merge: ClusterMetrics; server?: MetricsServer } | undefined;
  private readonly credits: RateCredits;

  constructor(private readonly options: PrimaryOptions) {
    const { config } = options;
    this.restarts = new Restarts(config.workers);
    this.credits = new RateCredits(config.workers);
    this.slots = Array.from({ length: config.workers }, (_, i) => ({ n: i + 1, forkedAt: 0, listened: false }));
    this.token = config.tokenSource === 'generated' ? config.authTokens[0] : undefined;
  }

  /** The metrics listener first (a taken METRICS_PORT fails the start with no worker to stop), then the workers. */
  async start(): Promise<void> {
    const { config, logger } = this.options;
    if (config.metricsPort !== 0) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- prom-client only when metrics are on
      const { ClusterMetrics } = require('./cluster-metrics') as typeof import('./cluster-metrics');
      this.metrics = { merge: new ClusterMetrics(() => this.live()) };
      try {
        this.metrics.server = await this.metrics.merge.serve({ host: config.metricsHost, port: config.metricsPort });
      } catch (err) {
        // The message names METRICS_PORT and how to change it or turn metrics off (src/metrics/metrics-listener.ts).
        logger.fatal({ err }, (err as Error).message);
        this.options.exit(1);
        return;
      }
      logger.info({ url: this.metrics.server.url }, 'metrics listening');
    }
    // SIGTERM while the metrics listener opened: nothing to fork any more.
    if (this.stopping) return;
    if (this.token !== undefined) logger.warn({ token: this.token }, GENERATED_TOKEN_WARNING);
    logger.info({ workers: config.workers }, 'starting workers');
    for (const slot of firstForks(config.database, this.slots)) this.fork(slot);
  }

  /** Stops restarting and drains every worker by one deadline; `code` is the least the supervisor exits with. */
  shutdown(signal: NodeJS.Signals | undefined, code = 0): void {
    this.worst = Math.max(this.worst, code);
    if (this.stopping) return;
    this.stopping = true;
    for (const slot of this.slots) clearTimeout(slot.restart);
    const { config, logger } = this.options;
    const deadline = Date.now() + config.shutdownTimeoutMs;
    logger.info({ signal, workers: this.live().length, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: draining every worker');
    const drain: DrainMessage = { type: 'drain', signal, deadline };
    for (const worker of this.live()) {
      // A worker whose channel is already closing is exiting; its exit is counted like the others.
      if (worker.isConnected()) worker.send(drain, () => undefined);
    }
    this.killer = setTimeout(() => {
      for (const worker of this.live()) worker.process.kill('SIGKILL');
    }, deadline - Date.now() + KILL_GRACE_MS);
    this.finishWhenAllExited();
  }

  // Every worker reloads what it can (AUTH_TOKENS_FILE) and logs its own line; this one says it was passed on.
  hangup(): void {
    const workers = this.live();
    for (const worker of workers) worker.process.kill('SIGHUP');
    this.options.logger.info({ signal: 'SIGHUP', workers: workers.length }, 'SIGHUP: forwarded to every worker');
  }

  private live(): Worker[] {
    return this.slots.flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]));
  }

  private fork(slot: Slot): void {
    slot.restart = undefined;
    const worker = cluster.fork({ [WORKER_SLOT_VARIABLE]: String(slot.n), ...(this.token === undefined ? {} : { [GENERATED_TOKEN_VARIABLE]: this.token }) });
    Object.assign(slot, { worker, forkedAt: Date.now(), listened: false });
    const { stdout, stderr } = worker.process;
    if (stdout !== null) {
      const relayed = relayLines(stdout, this.options.relay);
      this.relays.add(relayed);
      void relayed.then(() => this.relays.delete(relayed));
    }
    stderr?.pipe(process.stderr, { end: false });
    worker.on('message', (message: unknown) => {
      if (isListeningMessage(message)) this.listened(slot, message);
      else if (isMetricsMessage(message)) this.metrics?.merge.received(worker.id, message as MetricsReply);
      else if (isSlotMessage(message)) this.machineSlots.received(worker, message);
      else if (isCreditMessage(message)) this.credits.received(worker, message);
      else if (isWriteTurnMessage(message)) this.writeTurn.received(worker, message);
      else if (isCommitNotice(message)) relayCommit(worker, message, this.live());
    });
    worker.on('exit', (code, signal) => this.exited(slot, worker, code, signal as NodeJS.Signals | null));
  }

  private listened(slot: Slot, message: ListeningMessage): void {
    slot.listened = true;
    // SQLite: slot 1 has migrated; the others start now (src/supervisor/sqlite-start.ts).
    if (!this.serving && !this.stopping) for (const other of this.slots) if (other.worker === undefined && other.restart === undefined) this.fork(other);
    this.leadership.elect(this.slots);
    if (this.serving || !this.slots.every((each) => each.listened)) return;
    this.serving = true;
    const { address, port, maxConnections, openFileLimit } = message;
    this.options.logger.info({ address, port, maxConnections, openFileLimit, workers: this.options.config.workers }, 'listening');
  }

  private exited(slot: Slot, worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    this.machineSlots.exited(worker);
    this.writeTurn.exited(worker);
    this.leadership.exited(worker, this.slots);
    this.metrics?.merge.retire(worker.id);
    this.credits.exited(worker);
    const { logger } = this.options;
    const facts = { worker: slot.n, pid: worker.process.pid, code, signal };
    if (this.stopping) {
      this.worst = Math.max(this.worst, signal !== null ? 1 : (code ?? 1));
      this.finishWhenAllExited();
    } else if (!this.serving && !slot.listened) {
      // Port taken, store refused, bad setting: the next fork would fail the same way.
      logger.fatal(facts, 'worker failed to start; stopping the others');
      this.shutdown(undefined, 1);
    } else {
      const verdict = this.restarts.exited(slot.n, slot.listened ? Date.now() - slot.forkedAt : 0);
      if (verdict.crashLoop) {
        logger.fatal({ ...facts, exitsLastMinute: verdict.exitsLastMinute }, 'workers are crash looping: too many exits in the last minute; stopping');
        this.shutdown(undefined, 1);
        return;
      }
      logger.error({ ...facts, restartInMs: verdict.restartInMs, exitsLastMinute: verdict.exitsLastMinute }, 'worker exited');
      slot.restart = setTimeout(() => {
        this.metrics?.merge.restarted();
        this.fork(slot);
      }, verdict.restartInMs);
    }
  }

  private finishWhenAllExited(): void {
    if (this.live().length > 0) return;
    clearTimeout(this.killer);
    const grace = new Promise((resolve) => setTimeout(resolve, RELAY_GRACE_MS).unref());
    void Promise.race([Promise.all(this.relays), grace]).then(async () => {
      await this.metrics?.server?.close();
      this.options.logger.info({ code: this.worst }, 'stopped');
      this.options.exit(this.worst);
    });
  }
}
