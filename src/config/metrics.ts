// Prometheus metrics on a listener of their own; the rule against sharing the public port lives here.
import { z } from 'zod';
import { ConfigError } from './config-error';
import { integer, type Parsed } from './fields';
import { serverVariables } from './server';

export const metricsVariables = {
  METRICS_PORT: integer(0, 65535).prefault('9464').describe(
    'Prometheus metrics (`GET /metrics`) on a listener of their own, never on `PORT` (8 connections at most, closed after 5 s silent). `0` turns metrics off entirely: no instrument runs. A port in use stops the start with a line naming this variable.',
  ),
  METRICS_HOST: z.string().prefault('127.0.0.1').describe(
    'Address of the metrics listener. The Dockerfile sets `0.0.0.0` and publishes no port for it; nginx does not route to it.',
  ),
  // Read, not owned: the server slice describes it.
  PORT: serverVariables.PORT,
};

export function metricsSettings(env: Parsed<typeof metricsVariables>) {
  if (env.METRICS_PORT !== 0 && env.METRICS_PORT === env.PORT) {
    throw new ConfigError('invalid configuration:\n✖ METRICS_PORT must differ from PORT: metrics stay off the public listener (0 turns them off)');
  }
  return { metricsPort: env.METRICS_PORT, metricsHost: env.METRICS_HOST };
}
