/**
 * What the webhook dispatcher reports about its own work, for whoever watches (src/metrics). Called on the
 * dispatcher's path, so an implementation must be synchronous and cheap, and must never throw.
 */

/**
 * How one attempt ended: a 2xx (`delivered`), another status (`failed_status`), no answer within
 * WEBHOOK_TIMEOUT_MS (`timeout`), no connection (`refused`: refused, unresolvable, unreachable, connect timed
 * out), or any other network error.
 */
export type AttemptOutcome = 'delivered' | 'failed_status' | 'timeout' | 'refused' | 'error';

export type WebhookObserver = {
  attempted(outcome: AttemptOutcome): void;
  /** An event was delivered: seconds from its commit to the subscriber's 2xx, retries included. */
  delivered(lagSeconds: number): void;
  /**
   * Given once, at wiring: how to read the outbox's backlog (events pending, when the oldest was written) and the
   * delivery limit the dispatcher applies now, read when someone asks (a scrape).
   */
  backlogFrom(read: () => Promise<WebhookBacklog>): void;
};

/** `oldestCreatedAt`: Unix ms; undefined with nothing pending. `limit`: attempts one subscriber may have under way now. */
export type WebhookBacklog = { events: number; oldestCreatedAt: number | undefined; limit: number };

export const ignoreWebhooks: WebhookObserver = { attempted: () => undefined, delivered: () => undefined, backlogFrom: () => undefined };
