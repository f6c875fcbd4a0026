// The log: its level, and how much it holds for a stdout that is not keeping up.
import { z } from 'zod';
import { byteSize, type Parsed } from './fields';

export const loggingVariables = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).prefault('info').describe(
    'pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
  ),
  LOG_BUFFER_LIMIT: byteSize.prefault('4mb').describe(
    'Log lines held for a slow or blocked stdout, at most this much (bytes, or a number with `kb` or `mb`). Past it lines are dropped and counted; the count is logged once stdout drains.',
  ),
};

export function loggingSettings(env: Parsed<typeof loggingVariables>) {
  return { logLevel: env.LOG_LEVEL, logBufferBytes: env.LOG_BUFFER_LIMIT };
}
