// Webhook subscribers, how deliveries are signed, timed and retried, and which change types they carry.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { integer, list, retrySchedule, webhookSecrets, type Parsed } from './fields';

export const webhookVariables = {
  WEBHOOK_URLS: list.optional().describe(
    'New-plant webhook subscribers: `http` or `https` URLs, comma-separated, without user or password. Set with `WEBHOOK_SECRET`, or not at all: unset, no webhook runs and nothing is stored.',
  ),
  WEBHOOK_URLS_FILE: z.string().optional().describe(
    'A file of more subscribers, one URL a line (`#` lines skipped), added to `WEBHOOK_URLS`.',
  ),
  WEBHOOK_SECRET: webhookSecrets.optional().describe(
    'Standard Webhooks signing secret: `whsec_` and the base64 of at least 24 random bytes (`whsec_$(openssl rand -base64 32)`). Required with subscribers, refused without. During a rotation, old and new separated by a comma or a space: each signs every delivery, and `webhook-signature` carries every signature, space-separated.',
  ),
  WEBHOOK_TIMEOUT_MS: integer(100, 60_000).prefault('5000').describe(
    'A delivery attempt without a 2xx status within this time has failed (milliseconds); a 2xx whose body is still coming then is delivered.',
  ),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule.prefault('5s,5m,30m,2h,5h,10h,10h').describe(
    'Delays before each retry (`ms`, `s`, `m`, `h`), each with ±20% jitter; after the last one the event is marked failed.',
  ),
  WEBHOOK_RETENTION_HOURS: integer(1, 24 * 365).prefault('72').describe(
    'Delivered and failed events older than this are deleted from the outbox (hours).',
  ),
  WEBHOOK_EVENTS: list.prefault('plant.created').describe(
    'The change types sent to every subscriber, comma-separated: `plant.created` (the contract\'s new-plant body), `plant.updated`, `plant.deleted` (a `{type, data}` body); each delivery names its type in `webhook-event-type`. Written in the change\'s own transaction.',
  ),
  WEBHOOK_CONNECTIONS: integer(1, 256).prefault('64').describe(
    'Most connections, and attempts at once, per subscriber and per sending process (at `WORKERS` above 1 each worker on PostgreSQL, the leader alone on SQLite): also the most events delivered per round trip to it. While creates saturate the event loop the dispatcher uses fewer (down to one, plus one attempt per ten creates).',
  ),
};

function readUrlsFile(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
  } catch (error) {
    throw new ConfigError(`WEBHOOK_URLS_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** A subscriber's URL, parsed once here: `url` names it in the outbox and the logs, the rest is where to send. */
function parseSubscriber(url: string) {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`WEBHOOK_URLS: "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`WEBHOOK_URLS: "${url}" must be http or https`);
  // Logs name the subscriber by host; credentials in the URL would be one careless log line from leaking.
  if (parsed.username !== '' || parsed.password !== '') throw new ConfigError(`WEBHOOK_URLS: a URL must not carry a user or password (${parsed.host})`);
  return Object.freeze({ url, origin: parsed.origin, host: parsed.host, path: `${parsed.pathname}${parsed.search}` });
}

/**
 * WEBHOOK_EVENTS against the change types the registered resources declare: config cannot know them (it imports
 * no resource), so the composition root calls this once the environment has parsed (src/resources.ts).
 */
export function checkEventTypes(config: { webhooks?: { events: readonly string[] } }, known: readonly string[]): void {
  const events = config.webhooks?.events;
  if (events === undefined) return;
  const unknown = events.find((type) => !known.includes(type));
  if (unknown !== undefined) throw new ConfigError(`WEBHOOK_EVENTS: "${unknown}" is not a type; use ${known.join(', ')}`);
  if (events.length === 0) throw new ConfigError(`WEBHOOK_EVENTS: name at least one of ${known.join(', ')}`);
}

/** Subscribers and how to reach them; undefined when no webhook is configured. */
function resolveWebhooks(env: Parsed<typeof webhookVariables>) {
  const urls = [...(env.WEBHOOK_URLS ?? []), ...(env.WEBHOOK_URLS_FILE === undefined ? [] : readUrlsFile(env.WEBHOOK_URLS_FILE))];
  if (urls.length === 0 && env.WEBHOOK_SECRET === undefined) return undefined;
  if (urls.length === 0) throw new ConfigError('WEBHOOK_SECRET is set but no subscriber is: set WEBHOOK_URLS or WEBHOOK_URLS_FILE, or unset WEBHOOK_SECRET');
  if (env.WEBHOOK_SECRET === undefined) throw new ConfigError('WEBHOOK_URLS / WEBHOOK_URLS_FILE need WEBHOOK_SECRET (whsec_ followed by base64) to sign deliveries');
  const subscribers = urls.map(parseSubscriber);
  if (new Set(urls).size !== urls.length) throw new ConfigError('WEBHOOK_URLS: a URL is listed twice; each subscriber once');
  return Object.freeze({
    subscribers,
    /** Every secret signs each delivery: more than one while subscribers rotate from the old to the new. */
    secrets: env.WEBHOOK_SECRET,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE,
    retentionHours: env.WEBHOOK_RETENTION_HOURS,
    connections: env.WEBHOOK_CONNECTIONS,
    /** WEBHOOK_EVENTS, each once: types the resources declare (checked by checkEventTypes). */
    events: [...new Set(env.WEBHOOK_EVENTS)],
  });
}

export type WebhookConfig = NonNullable<ReturnType<typeof resolveWebhooks>>;
export type WebhookSubscriber = ReturnType<typeof parseSubscriber>;

export function webhookSettings(env: Parsed<typeof webhookVariables>) {
  return { webhooks: resolveWebhooks(env) };
}
