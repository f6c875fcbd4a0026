// Read ceiling: what Express 5 + helmet + a bearer check cost to answer GET /plants/{id} and GET /plants with the
// same JSON bodies as the service, kept in memory: no store, no parsing of the id, no logs. The service's reads
// are measured against it in the same run (bench/read.section.ts); it is never deployed.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';

const digest = (text: string) => createHash('sha256').update(text).digest();
const accepted = digest(process.env.AUTH_TOKENS ?? '');

// The service's bodies for a store seeded as bench/create.section.ts seeds it.
const stored = (id: number) => (id % 3 === 0 ? `{"id":${id},"name":"Stored plant ${id}"}` : `{"id":${id},"name":"Stored plant ${id}","tag":"seeded"}`);
const ONE = stored(4242);
const PAGE = `[${Array.from({ length: 100 }, (_, index) => stored(500_001 + index)).join(',')}]`;

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.use(helmet());
app.get('/readyz', (_req, res) => {
  res.json({ status: 'ready' });
});
app.use((req, res, next) => {
  const header = req.headers.authorization ?? '';
  if (!/^bearer /i.test(header) || !timingSafeEqual(digest(header.slice(7)), accepted)) {
    res.status(401).json({ error: 40101, message: 'unauthorized' });
    return;
  }
  next();
});
app.get('/plants/:id', (_req, res) => {
  res.set('Cache-Control', 'no-store').type('application/json').send(ONE);
});
app.get('/plants', (_req, res) => {
  res.set('Cache-Control', 'no-store').set('Link', '</plants?limit=100&after=500100>; rel="next"').type('application/json').send(PAGE);
});

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
