/**
 * The process: environment → config, the logger, process-wide handlers, signals → the service's drain, and the
 * exit code. Everything else is startService's (src/service.ts), which the tests start the same way.
 */
// First: an older node stops with one line before the driver can crash it (src/node-version.ts).
import './node-version';
// Then: from the moment it is loaded no SIGHUP can end the process (src/hangup.ts).
import { logHangupsWith } from './hangup';
import { ConfigError, type Config } from './config';
import { createLogger, exitAfterLogFlush, type Logger } from './logger';
import { loadServiceConfig, startService, StartError } from './service';

async function start(config: Config, logger: Logger): Promise<void> {
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception; exiting so the container restarts a clean process');
    exitAfterLogFlush(logger, 1);
  });
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled rejection; exiting so the container restarts a clean process');
    exitAfterLogFlush(logger, 1);
  });

  const service = await startService(config, logger);
  logHangupsWith(logger, () => (service.lifecycle.shuttingDown ? 'draining' : 'serving'));
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    void service.drain(signal).then((code) => exitAfterLogFlush(logger, code));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

function main(): void {
  let config: Config;
  try {
    config = loadServiceConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`plant-store: ${error.message}\n`);
    process.exit(1);
  }
  const logger = createLogger(config);
  logHangupsWith(logger, () => 'starting');
  start(config, logger).catch((err: unknown) => {
    const message = (err as Error).message;
    logger.fatal({ err }, err instanceof StartError ? message : `cannot start: ${message}`);
    exitAfterLogFlush(logger, 1);
  });
}

main();
