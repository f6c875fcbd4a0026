/** What the supervisor and its workers say over the cluster's IPC channel (src/supervisor). Types only. */

/** Worker → supervisor, once its listener is open (the start line's fields). */
export type ListeningMessage = {
  type: 'listening';
  address: string;
  port: number;
  maxConnections: number;
  openFileLimit: number | undefined;
};

/** Supervisor → worker: drain now, by this Date.now() instant, the one deadline every worker shares. */
export type DrainMessage = { type: 'drain'; signal: NodeJS.Signals | undefined; deadline: number };

/** Supervisor → worker: a scrape wants this worker's series; `id` pairs the reply with its scrape. */
export type MetricsRequest = { type: 'metrics'; id: number };

/** Worker → supervisor: its series as `getMetricsAsJSON()` gives them (empty while it starts). */
export type MetricsReply = { type: 'metrics'; id: number; metrics: object[] };

/** The environment a worker is forked with beside the supervisor's own. */
export const WORKER_SLOT_VARIABLE = 'SUPERVISED_WORKER_SLOT';
/** The token the supervisor generated when no source is set, so every worker accepts the same one. */
export const GENERATED_TOKEN_VARIABLE = 'SUPERVISOR_GENERATED_TOKEN';

export function isDrainMessage(message: unknown): message is DrainMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'drain';
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'listening';
}

export function isMetricsMessage(message: unknown): message is MetricsRequest & Partial<MetricsReply> {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'metrics';
}
