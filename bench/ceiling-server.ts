// Ceiling C: what Express 5 + helmet + a bearer check + zod cost with no storage and no logs.
// The service is measured against it in the same run (bench/run.ts); it stores nothing and is never deployed.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';
import { z } from 'zod';

const digest = (text: string) => createHash('sha256').update(text).digest();
const accepted = digest(process.env.AUTH_TOKENS ?? '');
const newPlant = z.object({ id: z.number().int(), name: z.string().min(1).max(200), tag: z.string().min(1).max(100).optional() });

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
app.use(express.json({ limit: '16kb' }));
app.post('/plants', (req, res) => {
  const parsed = newPlant.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: 40006, message: parsed.error.message });
    return;
  }
  res.json(parsed.data.tag === undefined ? { name: parsed.data.name } : { name: parsed.data.name, tag: parsed.data.tag });
});

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
