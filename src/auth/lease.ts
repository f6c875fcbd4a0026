import type { Scope } from './scopes';

/** Why a credential stopped granting what a long-lived response (a change stream) was opened with. */
export type LapseReason = 'revoked' | 'expired';

/**
 * How long a valid credential holds, for what outlives its request: `watch` calls `lapsed` once, when the
 * credential no longer grants `scope` (a token file reload dropped or narrowed it) or when it expires (a JWT's
 * exp). It returns the stop, which the watcher calls when it ends first. Built with the credentials (at load,
 * at verification), so a request allocates nothing for it.
 */
export type Lease = { watch(scope: Scope, lapsed: (reason: LapseReason) => void): () => void };

// setTimeout takes at most 2^31 - 1 ms (24.8 days) and fires at once for more: a longer wait goes in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The lease of a credential that holds until `expiresAtMs` (on `now`'s clock) and is never revoked before. */
export function expiringLease(expiresAtMs: number, now: () => number): Lease {
  return {
    watch: (_scope, lapsed) => {
      let timer: NodeJS.Timeout;
      const check = () => {
        const left = expiresAtMs - now();
        if (left <= 0) lapsed('expired');
        else arm(left);
      };
      const arm = (delayMs: number) => {
        timer = setTimeout(check, Math.min(delayMs, MAX_TIMER_MS));
        // A timer never holds the process: the response it watches does, as long as it is open.
        timer.unref();
      };
      // Always through a timer, even when already past: `lapsed` never runs inside `watch`.
      arm(Math.max(0, expiresAtMs - now()));
      return () => clearTimeout(timer);
    },
  };
}
