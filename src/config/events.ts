// The change feed: how long it keeps events, how often it speaks to idle streams, and its limits per process.
import { duration, integer, type Parsed } from './fields';

export const eventsVariables = {
  EVENTS_RETENTION: duration(1000, 365 * 24 * 3_600_000).prefault('24h').describe(
    'The change feed (`GET /plants/events`) keeps each event at least this long, a whole number with `ms`, `s`, `m` or `h`; a client resuming from an older position gets one `reset` event and then the live stream.',
  ),
  EVENTS_MAX_STREAMS: integer(1, 1_000_000).prefault('1000').describe(
    'Change streams open at once in this process (across all its workers together at `WORKERS` above 1), at most; one more is answered 503 (50320) with `Retry-After`. Each stream holds a connection: keep `MAX_CONNECTIONS` above it, with room for ordinary requests.',
  ),
  EVENTS_HEARTBEAT: duration(100, 600_000).prefault('15s').describe(
    'A comment line goes to every change stream this often, so proxies and load balancers do not close it as idle; keep it below their read timeout (the shipped nginx waits 1 h).',
  ),
  EVENTS_STREAM_BUFFER: integer(1, 1_000_000).prefault('1000').describe(
    'Events held for a change stream whose reader is not keeping up, at most; one more and the stream is ended with a `resume` event, and the client resumes from its last event without losing any.',
  ),
};

export function eventsSettings(env: Parsed<typeof eventsVariables>) {
  return {
    events: Object.freeze({
      retentionMs: env.EVENTS_RETENTION,
      heartbeatMs: env.EVENTS_HEARTBEAT,
      maxStreams: env.EVENTS_MAX_STREAMS,
      bufferEvents: env.EVENTS_STREAM_BUFFER,
    }),
  };
}
