/**
 * The process: environment → config, the logger, process-wide handlers, signals → the service's drain, and the
 * exit code. Everything else is startService's (src/service.ts), which the tests start the same way. At WORKERS > 1
 * the first process is the supervisor (src/supervisor/primary.ts), which never loads the service, and each
 * process it forks runs the rest of this file as a worker.
 */
// First: an older node stops with one line before the driver can crash it (src/node-version.ts).
import './node-version';
// Then: from the moment it is loaded no SIGHUP can end the process (src/hangup.ts).
import { logHangupsWith } from './hangup';
import { ConfigError, generateToken, loadConfig, poolPerWorker, type Config } from './config';
import { abandonStdout, createLogger, createRelayingLogger, exitAfterLogFlush, type Logger } from './logger';
import { creditsFromSupervisor } from './supervisor/rate-credit-client';
import { GENERATED_TOKEN_VARIABLE, followSupervisor, workerSlot } from './supervisor/worker';
import { workerSlots } from './supervisor/worker-slots';
import { workerWriteTurn } from './supervisor/worker-write-turn';
import { workerCommits, workerLeader } from './supervisor/worker-commits';

/* eslint-disable @typescript-eslint/no-require-imports -- the supervisor must not load the service (express, pg),
   and one process must not load the supervisor (node:cluster): each side loads only its own. */
const serviceModule = () => require('./service') as typeof import('./service');
const supervisorModule = () => require('./supervisor/primary') as typeof import('./supervisor/primary');
/* eslint-enable @typescript-eslint/no-require-imports */

function readConfig(load: () => Config): Config {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`plant-store: ${error.message}\n`);
    process.exit(1);
  }
}

function exitOnFatal(logger: Logger): void {
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception; exiting so the container restarts a clean process');
    exitAfterLogFlush(logger, 1);
  });
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled rejection; exiting so the container restarts a clean process');
    exitAfterLogFlush(logger, 1);
  });
}

type Drain = (signal: NodeJS.Signals | undefined, deadline?: number) => void;

async function start(config: Config, logger: Logger, worker: number | undefined): Promise<void> {
  exitOnFatal(logger);
  // A worker told to drain while still starting has nothing in flight: it leaves at once, as one process
  // signalled before its handlers exist does.
  let drain: Drain = () => exitAfterLogFlush(logger, 0);
  const supervised = () =>
    followSupervisor(
      (signal, deadline) => drain(signal, deadline),
      () => abandonStdout(logger),
    );
  const listening = worker === undefined ? undefined : supervised();
  const { startService } = serviceModule();
  // SQLite: the workers' group commits take the file's write lock in turn (src/supervisor/write-turn.ts), commits
  // are told to the other workers and one leader runs what runs once (PostgreSQL has NOTIFY and SKIP LOCKED claims).
  const sqlite = config.database.dialect === 'sqlite';
  const once = () => (sqlite ? { writeTurn: workerWriteTurn(config.databaseBusyTimeoutMs), commits: workerCommits(), leader: workerLeader() } : {});
  // Made for a worker only: one process has no supervisor to ask.
  const peers = worker === undefined ? {} : { worker, machine: workerSlots(), rateCredits: creditsFromSupervisor(), ...once() };
  const service = await startService(config, logger, { ...peers, listening });
  logHangupsWith(logger, () => (service.lifecycle.shuttingDown ? 'draining' : 'serving'));
  let stopping = false;
  drain = (signal, deadline) => {
    if (stopping) return;
    stopping = true;
    void service.drain(signal, deadline).then((code) => exitAfterLogFlush(logger, code));
  };
  // A listener is called with the signal's number too, which is no deadline.
  process.on('SIGTERM', (signal) => drain(signal));
  process.on('SIGINT', (signal) => drain(signal));
}

function serve(config: Config, worker: number | undefined): void {
  const logger = createLogger(config, undefined, worker === undefined ? undefined : { worker });
  logHangupsWith(logger, () => 'starting');
  start(config, logger, worker).catch((err: unknown) => {
    const message = (err as Error).message;
    logger.fatal({ err }, err instanceof serviceModule().StartError ? message : `cannot start: ${message}`);
    exitAfterLogFlush(logger, 1);
  });
}

function supervise(config: Config): void {
  const { logger, relay } = createRelayingLogger(config);
  logHangupsWith(logger, () => 'starting');
  exitOnFatal(logger);
  supervisorModule().runPrimary({ config, logger, relay, exit: (code) => exitAfterLogFlush(logger, code) });
}

function main(): void {
  // A worker accepts the token its supervisor generated, so every worker accepts the same one.
  const inherited = process.env[GENERATED_TOKEN_VARIABLE];
  const generate = inherited === undefined ? generateToken : () => inherited;
  const worker = workerSlot(process.env);
  const settings = readConfig(() => loadConfig(process.env, generate));
  if (settings.workers > 1 && worker === undefined) {
    supervise(settings);
    return;
  }
  const token = settings.tokenSource === 'generated' ? settings.authTokens[0] : undefined;
  const config = readConfig(() => serviceModule().loadServiceConfig(process.env, () => token ?? generate()));
  // DATABASE_POOL_SIZE is the replica's: each worker takes its share.
  serve(worker === undefined ? config : { ...config, databasePoolSize: poolPerWorker(config.databasePoolSize, config.workers) }, worker);
}

main();
