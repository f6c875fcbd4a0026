/**
 * Small things test files share: log capture, `sleep`, `errorOf`. No app here (see ./fixtures), so every helper
 * may import it.
 */
import type { Config } from '../../src/config';
import { createLogger, type Logger } from '../../src/logger';

export type LogLine = Record<string, unknown> & { level: number; msg: string };

/** A pino logger writing into arrays: the raw lines and each parsed. */
export function captureLogs(config: Pick<Config, 'logLevel'> = { logLevel: 'debug' }): { rawLogs: string[]; logs: LogLine[]; logger: Logger } {
  const rawLogs: string[] = [];
  const logs: LogLine[] = [];
  const logger = createLogger(config, {
    write(line: string) {
      rawLogs.push(line);
      logs.push(JSON.parse(line) as LogLine);
    },
  });
  return { rawLogs, logs, logger };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The message `run` throws with; fails the test when it throws nothing. */
export function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an error, and none was thrown');
}

/**
 * Waits until a line of `logs` matches (or `timeoutMs` passed; the test's own assertion then says what is missing).
 * Lines a request through app.request writes are there when its answer resolves; a line written apart from one (a
 * raw socket's request, background work) reaches app.logs later when the service runs in processes of its own.
 */
export async function untilLogged(app: { logs: readonly LogLine[] }, match: (line: LogLine) => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!app.logs.some(match) && Date.now() < deadline) await sleep(10);
}
