import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config';

export type { Logger };

// How long each of the two last flushes at exit (see exitAfterLogFlush) may wait on a blocked stdout.
const FINAL_FLUSH_MS = 500;

/**
 * JSON lines on stdout (or the given stream, which tests use to read the lines back). `bindings` go on every line:
 * a worker's `{worker: n}` (src/supervisor).
 * No pid/hostname: the container runtime already labels each line, and every byte is paid per request.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logBufferBytes'>>,
  destination?: DestinationStream,
  bindings?: Record<string, unknown>,
): Logger {
  return loggerOn(config, destination ?? bufferedStdout(config.logBufferBytes ?? 4 * 1024 * 1024), bindings).logger;
}

/**
 * The supervisor's logger, and `relay`, which writes workers' complete lines into the same batched stdout: one
 * writer on the process's stdout, so no line is cut by another's.
 */
export function createRelayingLogger(config: Pick<Config, 'logLevel' | 'logBufferBytes'>): { logger: Logger; relay: (lines: Buffer) => void } {
  const stdout = bufferedStdout(config.logBufferBytes);
  return { logger: loggerOn(config, stdout).logger, relay: stdout.raw };
}

function loggerOn(config: Pick<Config, 'logLevel'>, destination: DestinationStream | BufferedStdout, bindings?: Record<string, unknown>) {
  const stdout = 'reportDrops' in destination ? destination : undefined;
  const logger = pino(
    {
      level: config.logLevel,
      base: bindings,
      // Belt and braces: nothing logs headers today, but a future `req` serializer must not leak tokens.
      redact: ['req.headers.authorization', 'headers.authorization'],
    },
    stdout?.lines ?? (destination as DestinationStream),
  );
  stdout?.reportDrops(logger);
  if (stdout !== undefined) abandons.set(logger, stdout.abandon);
  return { logger };
}

const abandons = new WeakMap<Logger, () => void>();

/**
 * Stops writing stdout for good: for a worker whose supervisor, the only reader of its stdout, is gone. Every
 * write would fail with EPIPE, and sonic-boom's synchronous flush at exit retries any error but EAGAIN forever
 * (100 ms sleeps in Atomics.wait), so a worker left with lines queued would never exit.
 */
export function abandonStdout(logger: Logger): void {
  abandons.get(logger)?.();
}

type BufferedStdout = ReturnType<typeof bufferedStdout>;

/** The lines in a chunk written whole: one from this process's logger, any number relayed from a worker's pipe. */
function linesIn(chunk: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) count += 1;
  return Math.max(1, count);
}

/** What pino itself does to its stream on EPIPE (lib/tools.js, filterBrokenPipe), plus a flush that is done at once. */
function silence(stream: object): void {
  const noop = () => undefined;
  Object.assign(stream, { write: noop, flushSync: noop, end: noop, flush: (cb?: (err?: Error) => void) => cb?.() });
}

/**
 * stdout through sonic-boom in batched writes instead of one write(2) per line (a write per line costs
 * throughput under load: docs/performance/request-path-costs.md), flushed every 100 ms so a quiet service's
 * lines are never late by more.
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
    // Batches of 32 KiB (a quarter of the limit at most, so a small limit still writes): larger batches, fewer
    // write(2) calls per line logged.
    minLength: Math.min(32 * 1024, Math.floor(maxBytes / 4)),
    maxWrite: 64 * 1024,
    maxLength: maxBytes,
    retryEAGAIN: () => performance.now() < giveUpAt,
    // Buffers, not text: in text mode sonic-boom measures its pending chunk with Buffer.byteLength on every
    // line, which flattens the whole chunk (up to 16 KiB) each time and leaves garbage per request. Each line is
    // encoded once instead (lines below).
    contentMode: 'buffer',
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
  stream.on('drop', (data: Buffer) => {
    // sonic-boom emits 'drop' synchronously inside the write that did not fit, so a dropped report is known here.
    if (reporting) reportLost = true;
    else dropped += linesIn(data);
  });
  const lines: DestinationStream & { flush: (cb?: (err?: Error) => void) => void } = {
    write: (line: string) => stream.write(Buffer.from(line) as unknown as string),
    flush: (cb) => stream.flush(cb),
  };
  return {
    lines,
    abandon: () => silence(stream),
    raw: (chunk: Buffer) => {
      stream.write(chunk as unknown as string);
    },
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

/**
 * Ends the process once the log's write in flight, if any, has landed; pino's exit hook then writes the lines
 * still queued, synchronously. process.exit does not wait for a write on the thread pool, and the synchronous
 * flush skips the buffer such a write holds, so exiting during one (the periodic flush can start one at any
 * moment of the drain) could lose the lines it carried. A blocked stdout never calls back: the exit then comes
 * after FINAL_FLUSH_MS, and the exit hook gives up after as long again.
 */
export function exitAfterLogFlush(logger: Logger, code: number): void {
  const leave = () => process.exit(code);
  setTimeout(leave, FINAL_FLUSH_MS);
  logger.flush(leave);
}
