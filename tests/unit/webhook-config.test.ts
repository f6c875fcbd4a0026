import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { loadServiceConfig } from '../../src/resources';
import { errorOf as messageOf } from '../helpers/common';

const generate = () => 'generated-token';
const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

const errorOf = (env: Record<string, string>): string => messageOf(() => loadConfig(env, generate));

describe('loadConfig: webhooks', () => {
  it('when subscribers and a secret are set, then the webhook settings come with their defaults', () => {
    const config = loadConfig({ WEBHOOK_URLS: 'https://a.example.com/hooks, http://10.0.0.2:8080/p?x=1', WEBHOOK_SECRET: SECRET }, generate);

    expect(config.webhooks).toEqual({
      subscribers: [
        { url: 'https://a.example.com/hooks', origin: 'https://a.example.com', host: 'a.example.com', path: '/hooks' },
        { url: 'http://10.0.0.2:8080/p?x=1', origin: 'http://10.0.0.2:8080', host: '10.0.0.2:8080', path: '/p?x=1' },
      ],
      secrets: [SECRET],
      timeoutMs: 5000,
      retryScheduleMs: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      retentionHours: 72,
      connections: 64,
      events: ['plant.created'],
    });
  });

  it('when the schedule, timeout, retention and connections are given, then they are parsed', () => {
    const config = loadConfig(
      { WEBHOOK_URLS: 'http://127.0.0.1:9/h', WEBHOOK_SECRET: SECRET, WEBHOOK_RETRY_SCHEDULE: '250ms, 2s,1m,1h', WEBHOOK_TIMEOUT_MS: '800', WEBHOOK_RETENTION_HOURS: '1', WEBHOOK_CONNECTIONS: '3' },
      generate,
    );

    expect(config.webhooks).toMatchObject({ retryScheduleMs: [250, 2000, 60_000, 3_600_000], timeoutMs: 800, retentionHours: 1, connections: 3 });
  });

  it('when WEBHOOK_URLS_FILE names a file, then its lines are added to WEBHOOK_URLS', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'plants-config-')), 'urls');
    writeFileSync(file, '# subscribers\nhttps://b.example.com/h\n\n');

    const config = loadConfig({ WEBHOOK_URLS: 'https://a.example.com/h', WEBHOOK_URLS_FILE: file, WEBHOOK_SECRET: SECRET }, generate);

    expect(config.webhooks?.subscribers.map((subscriber) => subscriber.url)).toEqual(['https://a.example.com/h', 'https://b.example.com/h']);
  });

  it('when only one of subscribers and secret is set, then it refuses: both or neither', () => {
    expect(errorOf({ WEBHOOK_URLS: 'https://a.example.com/h' })).toBe(
      'WEBHOOK_URLS / WEBHOOK_URLS_FILE need WEBHOOK_SECRET (whsec_ followed by base64) to sign deliveries',
    );
    expect(errorOf({ WEBHOOK_SECRET: SECRET })).toBe(
      'WEBHOOK_SECRET is set but no subscriber is: set WEBHOOK_URLS or WEBHOOK_URLS_FILE, or unset WEBHOOK_SECRET',
    );
  });

  it.each([
    ['no whsec_ prefix', Buffer.alloc(32, 1).toString('base64')],
    ['fewer than 24 bytes', `whsec_${Buffer.alloc(23, 1).toString('base64')}`],
    ['not base64', 'whsec_not base64 at all, really not'],
  ])('when the secret has %s, then it refuses and names WEBHOOK_SECRET without echoing it', (_case, secret) => {
    const message = errorOf({ WEBHOOK_URLS: 'https://a.example.com/h', WEBHOOK_SECRET: secret });

    expect(message).toContain('WEBHOOK_SECRET');
    expect(message).toContain('must be whsec_ followed by the base64 of at least 24 random bytes');
    expect(message).not.toContain(secret);
  });

  it('when WEBHOOK_SECRET lists two secrets, by comma or by space, then both sign', () => {
    const next = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

    const byComma = loadConfig({ WEBHOOK_URLS: 'https://a.example.com/h', WEBHOOK_SECRET: `${SECRET}, ${next}` }, generate);
    const bySpace = loadConfig({ WEBHOOK_URLS: 'https://a.example.com/h', WEBHOOK_SECRET: `${next} ${SECRET}` }, generate);

    expect([byComma.webhooks?.secrets, bySpace.webhooks?.secrets]).toEqual([
      [SECRET, next],
      [next, SECRET],
    ]);
  });

  it('when one secret of the list is malformed or one is listed twice, then it refuses naming its place, without echoing it', () => {
    const short = `whsec_${Buffer.alloc(23, 1).toString('base64')}`;

    const malformed = errorOf({ WEBHOOK_URLS: 'https://a.example.com/h', WEBHOOK_SECRET: `${SECRET},${short}` });
    const twice = errorOf({ WEBHOOK_URLS: 'https://a.example.com/h', WEBHOOK_SECRET: `${SECRET},${SECRET}` });

    expect(malformed).toContain('WEBHOOK_SECRET[1]');
    expect(malformed).toContain('must be whsec_ followed by the base64 of at least 24 random bytes');
    expect(malformed).not.toContain(short.slice('whsec_'.length));
    expect(twice).toContain('lists a secret twice; each once');
    expect(twice).not.toContain(SECRET.slice('whsec_'.length));
  });

  it('when a URL is not http(s), carries credentials, is listed twice or the file is missing, then it refuses', () => {
    const withSecret = (env: Record<string, string>) => errorOf({ WEBHOOK_SECRET: SECRET, ...env });

    expect(withSecret({ WEBHOOK_URLS: 'ftp://a.example.com/h' })).toBe('WEBHOOK_URLS: "ftp://a.example.com/h" must be http or https');
    expect(withSecret({ WEBHOOK_URLS: 'not a url' })).toBe('WEBHOOK_URLS: "not a url" is not a URL');
    expect(withSecret({ WEBHOOK_URLS: 'https://u:p@a.example.com/h' })).toBe('WEBHOOK_URLS: a URL must not carry a user or password (a.example.com)');
    expect(withSecret({ WEBHOOK_URLS: 'https://a.example.com/h,https://a.example.com/h' })).toBe('WEBHOOK_URLS: a URL is listed twice; each subscriber once');
    expect(withSecret({ WEBHOOK_URLS_FILE: '/nonexistent/urls' })).toBe('WEBHOOK_URLS_FILE: cannot read /nonexistent/urls (ENOENT)');
  });

  it('when the retry schedule is malformed, then it refuses and names WEBHOOK_RETRY_SCHEDULE', () => {
    expect(errorOf({ WEBHOOK_RETRY_SCHEDULE: '5s,soon' })).toContain('WEBHOOK_RETRY_SCHEDULE');
    expect(errorOf({ WEBHOOK_RETRY_SCHEDULE: '0s' })).toContain('WEBHOOK_RETRY_SCHEDULE');
  });
});

// The types come from the registered resources, so the composition root checks them (src/resources.ts).
describe('loadServiceConfig: WEBHOOK_EVENTS', () => {
  const base = { AUTH_TOKENS: 'x'.repeat(32), WEBHOOK_URLS: 'http://127.0.0.1:9/hook', WEBHOOK_SECRET: `whsec_${Buffer.from('s'.repeat(32)).toString('base64')}` };

  it('when the three types are listed, then each is sent, once', () => {
    expect(loadServiceConfig({ ...base, WEBHOOK_EVENTS: 'plant.updated, plant.created,plant.deleted,plant.updated' }).webhooks?.events).toEqual([
      'plant.updated',
      'plant.created',
      'plant.deleted',
    ]);
  });

  it('when an unknown type is listed, then the start fails naming the variable and the types', () => {
    expect(() => loadServiceConfig({ ...base, WEBHOOK_EVENTS: 'plant.created,plant.renamed' })).toThrow(
      'WEBHOOK_EVENTS: "plant.renamed" is not a type; use plant.created, plant.updated, plant.deleted',
    );
  });
});
