import type { TenantsConfig, WebhookConfig } from '../config';
import { repeatWithoutOverlap } from '../lifecycle';
import type { Logger } from '../logger';
import { deliver, UNREACHABLE, type InFlightAttempt } from './delivery';
import { lanesOf, type Lane } from './dispatcher.lanes';
import { Settlements } from './dispatcher.settlements';
import { decodeSecret, tenantHeaderOf } from './event';
import type { OutboxEvent, OutboxStore } from './outbox';
import { DeliveryPace, eventLoopDelay, PACE_EVERY_MS, type LoopDelay } from './pace';
import { PRUNE_EVERY_MS, pruneOutbox } from './retention';
import { expiredSettlement, logExpired, logFailedAttempt, retryWindowMs, settlementOf } from './retry';
import { ignoreWebhooks, type WebhookObserver } from './observer';

export type DispatcherOptions = {
  store: OutboxStore;
  config: WebhookConfig;
  logger: Logger;
  observer?: WebhookObserver;
  /** TENANT_CLAIM's settings: set, each delivery names its tenant in webhook-tenant (tenantHeaderOf). */
  tenants?: TenantsConfig;
  now?: () => number;
  random?: () => number;
  /** How often due events are looked for besides the wake-up a new event gives. */
  pollMs?: number;
  /** Attempt outcomes are written in batches: one transaction per batch, not one per delivery. */
  settleEveryMs?: number;
  /** The saturation signal (the event loop's mean delay in ms since the last call); Node's own unless a test injects one. */
  loop?: LoopDelay;
};

/** The subscribers' URLs: what the outbox stores as each event's subscriber. */
export const urlsOf = (config: Pick<WebhookConfig, 'subscribers'>): string[] => config.subscribers.map((subscriber) => subscriber.url);

// Events of an unreachable subscriber marked failed per claim when their retry window has passed.
const EXPIRE_BATCH = 500;

/**
 * Sends outbox events to subscribers: one undici pool per subscriber (keep-alive, at most `connections`
 * requests at once, so a slow subscriber holds only its own slots), signed per attempt, retried on the
 * schedule with jitter, outcomes written back in batches. It must never block or slow a create: it only
 * reads due rows and writes outcomes, briefly, between the event loop's other work.
 */
export class WebhookDispatcher {
  private readonly lanes: Lane[];
  private readonly keys: readonly Buffer[];
  private readonly tenantHeader: ReturnType<typeof tenantHeaderOf>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly pollMs: number;
  private readonly settleEveryMs: number;
  private readonly windowMs: number;
  private readonly observer: WebhookObserver;
  private readonly inFlight = new Map<string, InFlightAttempt>();
  private readonly pace: DeliveryPace;
  /** Node's loop-delay monitor, from start() to stop(), unless a test injects the signal. */
  private monitor?: ReturnType<typeof eventLoopDelay>;
  private readonly settlements: Settlements;
  private timers: NodeJS.Timeout[] = [];
  private stopPruning = (): void => undefined;
  private started = false;
  private stopping = false;
  private abandoned = false;
  private idle: (() => void) | undefined;

  constructor(private readonly options: DispatcherOptions) {
    const { config } = options;
    this.keys = config.secrets.map(decodeSecret);
    this.tenantHeader = tenantHeaderOf(options.tenants);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.pollMs = options.pollMs ?? Math.max(10, Math.min(250, ...config.retryScheduleMs));
    this.settleEveryMs = options.settleEveryMs ?? 100;
    this.observer = options.observer ?? ignoreWebhooks;
    const { store } = options;
    this.pace = new DeliveryPace(config.connections, options.loop ?? (() => this.monitor?.read() ?? 0));
    // A dispatcher that never started (a worker that is not the SQLite leader) has no attempts to limit: its 0 keeps
    // the merged scrape's sum to what the dispatching workers allow.
    this.observer.backlogFrom(async () => ({ ...(await store.backlog()), limit: this.started ? this.pace.limit : 0 }));
    this.windowMs = retryWindowMs(config.retryScheduleMs);
    this.lanes = lanesOf(config, options.logger);
    this.settlements = new Settlements(store, options.logger);
  }

  start(): void {
    this.started = true;
    const { store, config, logger } = this.options;
    void Promise.resolve(store.retireOthers(urlsOf(config), this.now())).then(
      (retired) => {
        if (retired > 0) logger.warn({ events: retired }, 'webhook events of subscribers no longer configured marked failed');
      },
      (err: unknown) => logger.error({ err }, 'webhook outbox: cannot retire events of removed subscribers'),
    );
    this.timers.push(setInterval(this.poll, this.pollMs), setInterval(() => void this.settlements.flush(), this.settleEveryMs));
    if (this.options.loop === undefined) this.monitor = eventLoopDelay();
    this.timers.push(setInterval(this.repace, PACE_EVERY_MS));
    const prune = () => pruneOutbox(store, this.now(), config.retentionHours, logger, () => this.stopping);
    this.stopPruning = repeatWithoutOverlap(PRUNE_EVERY_MS, prune, { now: true });
    this.wake();
  }

  /**
   * Something may be due: each subscriber looks once, on the next turn of the event loop. `created` plants were
   * committed: they count towards the saturation test and grant each subscriber its floor's credits.
   */
  readonly wake = (created = 1): void => {
    this.pace.recorded(created);
    for (const lane of this.lanes) {
      lane.credits.grant(created);
      lane.more = true;
      this.schedulePump(lane);
    }
  };

  /** A window of the loop's load: the limit moves, and a subscriber with events waiting looks again if it grew. */
  private readonly repace = (): void => {
    const before = this.pace.limit;
    this.pace.sample();
    if (this.pace.limit > before) for (const lane of this.lanes) if (lane.more) this.schedulePump(lane);
  };

  private readonly poll = (): void => {
    for (const lane of this.lanes) this.schedulePump(lane, true);
  };

  /** Waits up to `timeoutMs` for attempts in flight; the rest are abandoned and stay pending. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    this.stopPruning();
    this.monitor?.stop();
    if (this.inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        const deadline = setTimeout(resolve, timeoutMs);
        this.idle = () => {
          clearTimeout(deadline);
          resolve();
        };
      });
    }
    const left = [...this.inFlight.keys()];
    if (left.length > 0) {
      this.abandoned = true;
      for (const attempt of this.inFlight.values()) attempt.abort();
      await this.options.store.release(left);
      this.options.logger.warn({ events: left.length }, 'webhook attempts unfinished at the drain deadline; left pending for the next start');
    }
    await this.settlements.flush();
    await Promise.all(this.lanes.map((lane) => lane.pool.destroy()));
  }

  private schedulePump(lane: Lane, polled = false): void {
    if (this.stopping) return;
    lane.pollQueued ||= polled;
    if (lane.pumpQueued) return;
    lane.pumpQueued = true;
    setImmediate(() => {
      const fromPoll = lane.pollQueued;
      lane.pumpQueued = false;
      lane.pollQueued = false;
      void this.pump(lane, fromPoll);
    });
  }

  private async pump(lane: Lane, polled: boolean): Promise<void> {
    if (lane.circuit.open) return this.probe(lane);
    // Claims only when something new may be due (a poll, a wake, or the last claim came back full): under steady creates
    // a claim after every finished attempt would mostly find nothing and cost CPU per create.
    if (!polled && !lane.more) return;
    const { limit } = this.pace;
    const free = lane.credits.room(limit, lane.inFlight);
    // With the pool busy, wait for a quarter of it to come free and claim those events at once: claiming as each
    // attempt finished cost one claim per event once deliveries fell behind creates.
    if (this.stopping || lane.claiming || free <= 0 || (!polled && free < Math.ceil(limit / 4))) return;
    lane.more = false;
    const events = await this.claim(lane, free, this.now(), polled);
    if (events === undefined) return;
    lane.credits.spend(limit, lane.inFlight, events.length);
    if (events.length === free) lane.more = true;
    for (const event of events) void this.attempt(lane, event);
    // A new event arrived while this claim was reading: look again, there is room.
    if (lane.more && events.length < free) this.schedulePump(lane);
  }

  /**
   * An open circuit: nothing until the probe is due. Then the events whose retry window has passed while they
   * waited are marked failed, and the oldest due event is dialed: answered, the circuit closes and the rest
   * follow; refused, the next probe waits twice as long.
   */
  private async probe(lane: Lane): Promise<void> {
    const { circuit } = lane;
    if (this.stopping || lane.claiming || !circuit.probeDue(this.now())) return;
    circuit.probing = true;
    try {
      for (;;) {
        const now = this.now();
        const expired = await this.claim(lane, EXPIRE_BATCH, now - this.windowMs, true);
        if (expired === undefined) return;
        for (const event of expired) {
          this.settlements.add(expiredSettlement(event, now, circuit.error));
          logExpired(this.options.logger, lane.host, event, circuit.error);
        }
        if (expired.length < EXPIRE_BATCH) break;
        await this.settlements.flush();
      }
      const [event] = (await this.claim(lane, 1, this.now(), true)) ?? [];
      // Nothing due: the next event that comes due is the probe.
      if (event !== undefined) await this.attempt(lane, event, true);
    } finally {
      circuit.probing = false;
    }
  }

  private async claim(lane: Lane, limit: number, now: number, sweep: boolean): Promise<OutboxEvent[] | undefined> {
    lane.claiming = true;
    try {
      return await this.options.store.claim(lane.url, limit, now, sweep);
    } catch (err) {
      lane.more = true;
      this.options.logger.error({ err, subscriber: lane.host }, 'webhook outbox: cannot read due events');
      return undefined;
    } finally {
      lane.claiming = false;
    }
  }

  private async attempt(lane: Lane, event: OutboxEvent, probe = false): Promise<void> {
    const { config } = this.options;
    const at = this.now();
    const inFlight = deliver(lane, this.keys, event, at, config.timeoutMs, this.tenantHeader(event.tenant));
    this.inFlight.set(event.seq, inFlight);
    lane.inFlight += 1;
    const { failure, status, outcome } = await inFlight.result;
    this.inFlight.delete(event.seq);
    lane.inFlight -= 1;
    if (this.abandoned) return;
    this.observer.attempted(outcome);
    if (outcome === 'delivered') this.observer.delivered(Math.max(0, this.now() - event.createdAt) / 1000);
    if (failure !== undefined && UNREACHABLE.has(failure)) lane.circuit.refused(failure, probe, this.now());
    // Answered after a refusal: the subscriber's waiting events go out as usual.
    else if (lane.circuit.answered()) lane.more = true;
    this.record(lane, event, at, failure, status);
    if (this.settlements.full) void this.settlements.flush();
    if (this.inFlight.size === 0) this.idle?.();
    if (lane.more) this.schedulePump(lane);
  }

  private record(lane: Lane, event: OutboxEvent, at: number, failure: string | undefined, status: number | undefined): void {
    const settlement = settlementOf(event, at, failure, status, this.options.config.retryScheduleMs, this.random);
    this.settlements.add(settlement);
    if (failure !== undefined) logFailedAttempt(this.options.logger, lane.host, event, settlement, failure, status);
  }
}
