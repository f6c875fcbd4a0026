import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { FeedObserver } from '../observers';

// Seconds: the goal is delivery within a second of the commit, across replicas too.
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The change feed's instruments (GET /plants/events), fed by the feed through the observer it is given. */
export function feedMetrics(registers: Registry[]): FeedObserver {
  const streams = new Gauge({ name: 'plants_feed_streams_open', help: 'Change streams open in this process (EVENTS_MAX_STREAMS at most).', registers });
  const sent = new Counter({ name: 'plants_feed_events_sent_total', help: 'Change events written to streams, counted once per stream.', registers });
  const cutOff = new Counter({
    name: 'plants_feed_streams_cut_off_total',
    help: 'Streams ended because their reader fell more than EVENTS_STREAM_BUFFER events behind (they resume).',
    registers,
  });
  const lag = new Histogram({
    name: 'plants_feed_lag_seconds',
    help: "Time from an event's commit to this process's feed reading it, to be sent to its live streams, in seconds.",
    buckets: LAG_BUCKETS,
    registers,
  });
  return {
    streams: (open) => streams.set(open),
    sent: (frames) => sent.inc(frames),
    cutOff: () => cutOff.inc(),
    lag: (seconds) => lag.observe(seconds),
  };
}
