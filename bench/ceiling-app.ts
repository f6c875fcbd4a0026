// What every ceiling server shares: Express 5 with helmet's headers, /readyz, and a bearer check against
// AUTH_TOKENS (one token, compared as SHA-256 digests). Each ceiling adds its own routes and listens with listen().
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type RequestHandler } from 'express';
import helmet from 'helmet';

// The service builds each request and response with Express's prototypes in place (src/http/request-classes.ts);
// a ceiling built otherwise would pay for shapes the service does not. Taken from the service's build, which
// `npm run bench` makes first: bench compiles on its own (its rootDir is bench).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { requestClasses } = require('../dist/http/request-classes') as { requestClasses: (app: Express) => http.ServerOptions };

const digest = (text: string) => createHash('sha256').update(text).digest();

/** `first`, when given, runs before everything else, as the service's request log does. */
export function ceilingApp(first?: RequestHandler): Express {
  const accepted = digest(process.env.AUTH_TOKENS ?? '');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  if (first !== undefined) app.use(first);
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
  return app;
}

/** Listens on PORT (127.0.0.1), says so on stdout as the service does, and closes on SIGTERM after onClose. */
export function listen(app: Express, onClose: () => void = () => undefined): void {
  const server = http.createServer(requestClasses(app), app);
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port })}\n`);
  });
  process.on('SIGTERM', () =>
    server.close(() => {
      onClose();
      process.exit(0);
    }),
  );
}
