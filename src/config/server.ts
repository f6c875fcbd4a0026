// The process and its public listener: where it listens, how long it waits for slow clients and for its drain,
// how many connections it holds.
import { z } from 'zod';
import { ConfigError } from './config-error';
import { integer, type Parsed } from './fields';

export const serverVariables = {
  NODE_ENV: z.enum(['development', 'production', 'test']).prefault('development').describe(
    '`development`, `production` or `test`. `production` requires a token source (`AUTH_TOKENS`, `AUTH_TOKENS_FILE` or `AUTH_JWKS_URL`); nothing else branches on it.',
  ),
  PORT: integer(0, 65535).prefault('3000').describe(
    'TCP port of the public listener.',
  ),
  HOST: z.string().prefault('127.0.0.1').describe(
    'Address of the public listener. The Dockerfile sets `0.0.0.0`.',
  ),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).prefault('10000').describe(
    'On SIGTERM or SIGINT: how long in-flight requests and webhook attempts may take before their connections are closed and the process exits 1 (milliseconds).',
  ),
  HEADERS_TIMEOUT_MS: integer(1000, 600_000).prefault('10000').describe(
    'Against slow clients: time to receive all request headers, then 408 (milliseconds).',
  ),
  REQUEST_TIMEOUT_MS: integer(1000, 600_000).prefault('30000').describe(
    'Against slow clients: time to receive the whole request, then 408 (milliseconds); not below `HEADERS_TIMEOUT_MS`.',
  ),
  KEEP_ALIVE_TIMEOUT_MS: integer(1000, 600_000).prefault('65000').describe(
    'Idle keep-alive connections close after this (milliseconds); keep it above the proxy\'s upstream idle timeout (nginx 60 s), so the proxy closes first.',
  ),
  MAX_CONNECTIONS: integer(1, 1_000_000).optional().describe(
    'Open connections at most, per process (each worker at `WORKERS` above 1 has its own cap). Unset: 1000, or fewer when the open-file limit (`ulimit -n`) leaves room for fewer beside the descriptors open at start (the store, the log, the metrics listener, Node\'s own) and those the configured parts may open later (the PostgreSQL pool, `WEBHOOK_CONNECTIONS` per subscriber, 32 spare); a value above that room is lowered to it, with a warning. The start line `listening` names the cap. At the cap a new connection replaces the longest-idle one (no request in progress for a second or more); only when there is none is the new one closed on accept, before a byte is read.',
  ),
};

export function serverSettings(env: Parsed<typeof serverVariables>) {
  if (env.REQUEST_TIMEOUT_MS < env.HEADERS_TIMEOUT_MS) {
    throw new ConfigError(
      `REQUEST_TIMEOUT_MS: ${env.REQUEST_TIMEOUT_MS} is below HEADERS_TIMEOUT_MS (${env.HEADERS_TIMEOUT_MS}); the whole request cannot take less time than its headers`,
    );
  }
  return {
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
    /** MAX_CONNECTIONS as set; the service derives the cap from the open-file limit when unset (src/http/open-files.ts). */
    maxConnections: env.MAX_CONNECTIONS,
  };
}
