import type { Logger } from './logger';

/**
 * SIGHUP never ends the process. Without a listener Node leaves a signal to the operating system, and for
 * SIGHUP that is death: no drain, no log line. So this module installs its listener when it is loaded, which
 * server.ts does before any other import (the one side effect at import in src/, and only the process glue
 * imports it), and the listener stays for the life of the process.
 *
 * What can be reloaded (AUTH_TOKENS_FILE, by src/auth's token rotation, which logs its own line) has a
 * listener of its own while it runs. When none does (tokens from the environment, JWT only, still starting,
 * draining), this one logs the single line; a signal that comes before the logger exists is logged once it does.
 */

type Report = { logger: Logger; state: () => string };

let report: Report | undefined;
let missed = false;

const log = ({ logger, state }: Report) =>
  logger.info({ signal: 'SIGHUP', state: state() }, 'SIGHUP: nothing to reload now (only AUTH_TOKENS_FILE is, while serving); carrying on');

process.on('SIGHUP', () => {
  // Another listener is a reload at work: it logs what it reloaded, and one line per signal is enough.
  if (process.listenerCount('SIGHUP') > 1) return;
  if (report === undefined) missed = true;
  else log(report);
});

/** Where the line goes, and how to name the process's state in it ('starting', 'serving', 'draining'). */
export function logHangupsWith(logger: Logger, state: () => string): void {
  report = { logger, state };
  if (missed) {
    missed = false;
    log(report);
  }
}
