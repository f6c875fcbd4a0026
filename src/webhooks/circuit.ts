import type { Logger } from '../logger';

// Probes of an unreachable subscriber back off up to this many times the first delay.
const PROBE_BACKOFF_LIMIT = 30;

/**
 * One subscriber's circuit: closed while it takes connections. A refused connection opens it: the subscriber's
 * events then wait untouched (no attempt spent, no log line) until a probe, one due event dialed, is due. The
 * delay before the next probe doubles after each refused probe, from `firstDelayMs` up to 30 times that.
 * Whatever the subscriber answers closes it. Attempts already under way when it opened do not move the probe.
 * It logs its own transitions: one line when it opens, one when it closes.
 */
export class Circuit {
  private openUntil = 0;
  private delayMs = 0;
  probing = false;
  /** What opened it: the error of the refused connection. */
  error = '';

  constructor(
    private readonly firstDelayMs: number,
    private readonly logger: Logger,
    private readonly host: string,
  ) {}

  get open(): boolean {
    return this.openUntil > 0;
  }

  probeDue(now: number): boolean {
    return !this.probing && now >= this.openUntil;
  }

  /** A connection refused (not dialable); true when this opens a closed circuit. */
  refused(error: string, probe: boolean, now: number): boolean {
    const opening = !this.open;
    if (!opening && !probe) return false;
    this.delayMs = opening ? this.firstDelayMs : Math.min(this.delayMs * 2, this.firstDelayMs * PROBE_BACKOFF_LIMIT);
    this.openUntil = now + this.delayMs;
    this.error = error;
    if (opening) {
      this.logger.warn(
        { subscriber: this.host, error, probeInMs: this.delayMs },
        'webhook subscriber unreachable; its events wait, without spending attempts, until a probe gets through',
      );
    }
    return opening;
  }

  /** The subscriber answered (any status, even a timeout after connecting); true when this closes an open circuit. */
  answered(): boolean {
    if (!this.open) return false;
    this.openUntil = 0;
    this.logger.info({ subscriber: this.host }, 'webhook subscriber reachable again; sending its waiting events');
    return true;
  }
}
