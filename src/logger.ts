import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config';

export type { Logger };

// How long the last flush at exit may wait on a blocked stdout before the remaining lines are given up.
const FINAL_FLUSH_MS = 500;

/**
 * JSON lines on stdout (or the given stream, which tests use to read the lines back).
 * No pid/hostname: the container runtime already labels each line, and every byte is paid per request.
 */
export function createLogger(config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logBufferBytes'>>, destination?: DestinationStream): Logger {
  const stdout = destination === undefined ? bufferedStdout(config.logBufferBytes ?? 4 * 1024 * 1024) : undefined;
  const logger = pino(
    {
      level: config.logLevel,
      base: undefined,
      // Belt and braces: nothing logs headers today, but a future `req` serializer must not leak tokens.
      redact: ['req.headers.authorization', 'headers.authorization'],
    },
    destination ?? stdout?.stream,
  );
  stdout?.reportDrops(logger);
  return logger;
}

/**
 * stdout through sonic-boom in 4 KiB writes instead of one write(2) per line (about 6% of the service's
 * throughput under load, measured by npm run bench), flushed every 100 ms so a quiet service's lines are
 * never late by more.
 *
 * A reader that stops reading must not cost memory or the exit: the buffer holds at most maxBytes, lines
 * past it are dropped and counted, and the count is logged once lines flow again. stdout is switched to
 * non-blocking (Node does that when process.stdout is first touched on a pipe), so no write(2) can hang the
 * process, and the flush at exit gives up after FINAL_FLUSH_MS.
 */
function bufferedStdout(maxBytes: number) {
  void process.stdout.fd;
  let giveUpAt = Number.POSITIVE_INFINITY;
  const stream = pino.destination({
    dest: 1,
    sync: false,
    minLength: 4096,
    maxLength: maxBytes,
    retryEAGAIN: () => performance.now() < giveUpAt,
  });
  const flushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    giveUpAt = performance.now() + FINAL_FLUSH_MS;
    try {
      flushSync();
    } catch {
      // Still blocked at the deadline: what is left is lost, and exiting on time matters more.
    }
  };
  setInterval(() => stream.flush(), 100).unref();
  let dropped = 0;
  let reporting = false;
  let reportLost = false;
  stream.on('drop', () => {
    // sonic-boom emits 'drop' synchronously inside the write that did not fit, so a dropped report is known here.
    if (reporting) reportLost = true;
    else dropped += 1;
  });
  return {
    stream,
    reportDrops: (logger: Logger) => {
      let scheduled = false;
      stream.on('write', () => {
        if (dropped === 0 || scheduled) return;
        scheduled = true;
        // After this write has been accounted for, not inside sonic-boom's own bookkeeping.
        setImmediate(() => {
          scheduled = false;
          const count = dropped;
          dropped = 0;
          reporting = true;
          logger.warn({ dropped: count }, 'log destination was blocked: dropped lines past the log buffer');
          reporting = false;
          // The buffer filled again before the report got in: keep its count for the next report.
          if (reportLost) {
            reportLost = false;
            dropped += count;
          }
        });
      });
    },
  };
}
