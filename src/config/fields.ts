// The environment's field types: each reads one variable's string and says, when it cannot, what the value
// must look like. Each slice (server.ts, store.ts, auth.ts, ...) builds its variables from them.
import path from 'node:path';
import { z } from 'zod';
import { coversEveryAddress, parseProxyEntry } from './trust-proxy';

/** A slice's variables as parsed: what its transform reads. */
export type Parsed<Variables extends z.core.$ZodShape> = z.output<z.ZodObject<Variables>>;

// Express's own names for address ranges (proxy-addr); anything else must be an address or CIDR.
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

export const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const list = z
  .string()
  .transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item !== ''));

export const byteSize = z
  .string()
  .regex(/^\d+\s*(b|kb|kib|mb|mib)?$/i, 'must be a number of bytes, optionally with kb or mb (e.g. 16kb)')
  .transform((value) => {
    const [, digits = '0', unit = 'b'] = /^(\d+)\s*([a-z]*)$/i.exec(value) ?? [];
    const multiplier = unit.toLowerCase().startsWith('m') ? 1024 * 1024 : unit.toLowerCase().startsWith('k') ? 1024 : 1;
    return Number(digits) * multiplier;
  })
  .pipe(z.number().int().min(1).max(64 * 1024 * 1024));

export type DatabaseTarget = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export const databaseUrl = z
  .string()
  .regex(
    /^(file:.+|postgres(ql)?:\/\/.+)/,
    'must be file:<path> naming a SQLite file (e.g. file:./data/plants.db) or postgres://user@host:5432/database',
  )
  .transform((value): DatabaseTarget =>
    value.startsWith('file:') ? { dialect: 'sqlite', path: path.resolve(value.slice('file:'.length)) } : { dialect: 'postgres', url: value },
  );

export const redisUrl = z.string().regex(/^rediss?:\/\/.+/, 'must be redis://host:6379 (or rediss:// for TLS)');

export const origins = list.pipe(
  z.array(
    z.string().refine((origin) => {
      try {
        return new URL(origin).origin === origin;
      } catch {
        return false;
      }
    }, 'each entry must be an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash)'),
  ),
);

export const trustProxy = z
  .string()
  .transform((value, ctx): false | number | string[] => {
    const trimmed = value.trim().toLowerCase();
    if (trimmed === 'false' || trimmed === '0' || trimmed === 'off') return false;
    if (trimmed === 'true') {
      ctx.addIssue({
        code: 'custom',
        message: 'true would trust any X-Forwarded-For a client writes; give the hop count (e.g. 1) or the proxy addresses',
      });
      return z.NEVER;
    }
    if (/^\d+$/.test(trimmed)) return Number(trimmed);
    const entries = trimmed.split(',').map((entry) => entry.trim()).filter(Boolean);
    const ranges = [];
    for (const entry of entries) {
      if (PROXY_RANGE_NAMES.has(entry)) continue;
      const range = parseProxyEntry(entry);
      if (typeof range === 'string') {
        ctx.addIssue({ code: 'custom', message: range });
        return z.NEVER;
      }
      ranges.push(range);
    }
    if (coversEveryAddress(ranges)) {
      ctx.addIssue({ code: 'custom', message: 'these ranges together trust every address, as true would; list only the proxies' });
      return z.NEVER;
    }
    return entries;
  });

// Signing keys fetched over plain HTTP could be swapped by anyone on the path, so HTTPS unless on this host.
export const jwksUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname));
  } catch {
    return false;
  }
}, 'must be an https:// URL (http:// only on 127.0.0.1, localhost or [::1])');
// Standard Webhooks secrets: whsec_ and the base64 of the key; fewer than 24 bytes is too weak a key for HMAC-SHA256.
const webhookSecret = z.string().refine((value) => {
  const key = value.slice('whsec_'.length);
  return value.startsWith('whsec_') && /^[A-Za-z0-9+/]+={0,2}$/.test(key) && Buffer.from(key, 'base64').length >= 24;
}, 'must be whsec_ followed by the base64 of at least 24 random bytes (e.g. whsec_$(openssl rand -base64 32))');

// Several secrets during a rotation, separated by commas or white space (neither occurs in base64): each signs
// every delivery, and the signature header carries them all, space-separated, as Standard Webhooks allows.
export const webhookSecrets = z
  .string()
  .transform((value) => value.split(/[\s,]+/).filter((item) => item !== ''))
  .pipe(
    z
      .array(webhookSecret)
      .min(1, 'must name at least one secret')
      .refine((secrets) => new Set(secrets).size === secrets.length, 'lists a secret twice; each once'),
  );

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** One duration with its unit (ms, s, m or h), e.g. 1h or 30m, in milliseconds from min to max. */
export const duration = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+(ms|s|m|h)$/, 'must be a whole number with ms, s, m or h (e.g. 1h, 30m)')
    .transform((value) => {
      const [, digits = '0', unit = 'ms'] = /^(\d+)(ms|s|m|h)$/.exec(value) ?? [];
      return Number(digits) * (DURATION_UNITS_MS[unit] ?? 1);
    })
    .pipe(z.number().int().min(min, `must be at least ${min} ms`).max(max, `must be at most ${max} ms`));
// The delays before each retry, e.g. 5s,5m,30m,2h: one attempt at once, then one after each delay.
export const retrySchedule = list.pipe(
  z
    .array(
      z
        .string()
        .regex(/^\d+(ms|s|m|h)$/, 'each entry must be a whole number with ms, s, m or h (e.g. 5s,5m,30m,2h)')
        .transform((entry) => {
          const [, digits = '0', unit = 'ms'] = /^(\d+)(ms|s|m|h)$/.exec(entry) ?? [];
          return Number(digits) * (DURATION_UNITS_MS[unit] ?? 1);
        })
        .pipe(z.number().int().min(1).max(7 * 24 * 3_600_000)),
    )
    .min(1, 'must list at least one delay'),
);
