/**
 * A subscriber's lane in the dispatcher (src/webhooks/dispatcher.ts): its connection pool and host, with the
 * dispatcher's state for it (attempts in flight, a pump queued or claiming, its circuit and floor credits).
 * Holds state only; the dispatcher decides when a lane claims and attempts.
 */
import type { WebhookConfig } from '../config';
import type { Logger } from '../logger';
import { Circuit } from './circuit';
import { subscriberOf, type Subscriber } from './delivery';
import { FloorCredits } from './pace';

export type Lane = Subscriber & {
  inFlight: number;
  pumpQueued: boolean;
  /** The queued pump comes from the poll: a sweep, which looks at every due event, not only past the last claim. */
  pollQueued: boolean;
  claiming: boolean;
  /** Due events may wait that no claim has seen: set by a new event, or by a claim that filled its limit. */
  more: boolean;
  /** Open while the subscriber refuses connections: its events wait for a probe to get through. */
  circuit: Circuit;
  /** Attempts past the pace's limit this subscriber may still start: the floor of one per ten creates. */
  credits: FloorCredits;
};

/** One lane per configured subscriber, idle, its circuit closed. */
export function lanesOf(config: WebhookConfig, logger: Logger): Lane[] {
  // A subscriber that refused a connection is probed after this long, then less and less often.
  const firstProbeMs = Math.min(1000, ...config.retryScheduleMs);
  return config.subscribers.map((target) => {
    const subscriber = subscriberOf(target, config);
    const circuit = new Circuit(firstProbeMs, logger, subscriber.host);
    const credits = new FloorCredits(config.connections);
    return { ...subscriber, inFlight: 0, pumpQueued: false, pollQueued: false, claiming: false, more: false, circuit, credits };
  });
}
