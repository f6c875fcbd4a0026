// What the HTTP app accepts and serves: body size, browser origins, which proxies to believe, the docs page.
import { z } from 'zod';
import { byteSize, origins, trustProxy, type Parsed } from './fields';

export const httpVariables = {
  BODY_LIMIT: byteSize.prefault('16kb').describe(
    'Largest accepted request body: bytes, or a number with `kb` or `mb` (1024-based).',
  ),
  BATCH_BODY_LIMIT: byteSize.prefault('1mb').describe(
    'Largest accepted body of a batch of writes (up to 1000 operations, docs/api.md): bytes, or a number with `kb` or `mb` (1024-based).',
  ),
  CORS_ORIGINS: origins.prefault('').describe(
    'Browser origins allowed to call, comma-separated (`https://app.example.com`). Empty: no CORS headers at all.',
  ),
  TRUST_PROXY: trustProxy.prefault('false').describe(
    'Which proxies to trust for `X-Forwarded-For`: `false`, a hop count (`1` behind one nginx), or comma-separated addresses, CIDRs or IPv4 address/netmask (also `loopback`, `linklocal`, `uniquelocal`). `true` is refused, since it trusts what any client writes; so is a list covering every address (`0.0.0.0/0`, `::/0`, or ranges that add up to it).',
  ),
  DOCS_ENABLED: z.enum(['true', 'false']).transform((value) => value === 'true').prefault('true').describe(
    'The API reference page at `GET /docs` (no token needed to read it); `false` turns it off.',
  ),
};

export function httpSettings(env: Parsed<typeof httpVariables>) {
  return { bodyLimitBytes: env.BODY_LIMIT, batchBodyLimitBytes: env.BATCH_BODY_LIMIT, corsOrigins: env.CORS_ORIGINS, trustProxy: env.TRUST_PROXY, docsEnabled: env.DOCS_ENABLED };
}
