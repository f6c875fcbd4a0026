import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config';

export type { Logger };

/**
 * JSON lines on stdout (or the given stream, which tests use to read the lines back).
 * No pid/hostname: the container runtime already labels each line, and every byte is paid per request.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: undefined,
      // Belt and braces: nothing logs headers today, but a future `req` serializer must not leak tokens.
      redact: ['req.headers.authorization', 'headers.authorization'],
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
