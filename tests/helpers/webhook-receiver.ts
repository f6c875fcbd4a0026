import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export const WEBHOOK_SECRET = `whsec_${Buffer.from('plant-store-test-webhook-secret-32b').toString('base64')}`;

export type Delivery = {
  id: string;
  timestamp: number;
  signature: string;
  contentType: string | undefined;
  body: string;
  /** The W3C traceparent header, when the delivery carried one. */
  traceparent: string | undefined;
  /** What standardwebhooks' verify said: true, or its error message. */
  verified: true | string;
  receivedAt: number;
};

const eventTypes = new WeakMap<Delivery, string | undefined>();
/** The delivery's webhook-event-type header (kept beside the Delivery, so existing whole-object assertions hold). */
export const eventTypeOf = (delivery: Delivery | undefined): string | undefined => (delivery === undefined ? undefined : eventTypes.get(delivery));
const tenants = new WeakMap<Delivery, string | undefined>();
/** The delivery's webhook-tenant header as sent (percent-encoded), or undefined when it had none. */
export const tenantHeaderOf = (delivery: Delivery | undefined): string | undefined => (delivery === undefined ? undefined : tenants.get(delivery));

/**
 * A status, a status with headers, 'hang' (never answer), 'reset' (close the connection without an answer) or
 * 'endless' (200, then a body of a byte every 100 ms that never ends).
 */
export type Answer = number | 'hang' | 'reset' | 'endless' | { status: number; headers: Record<string, string> };

export type Receiver = {
  url: string;
  port: number;
  deliveries: Delivery[];
  /** Connections the receiver has seen open at once, at most. */
  peakConnections: () => number;
  waitFor: (predicate: (deliveries: Delivery[]) => boolean, timeoutMs?: number) => Promise<Delivery[]>;
  close: () => Promise<void>;
};

/**
 * A webhook subscriber as a user writes one: node's http server on 127.0.0.1, verifying every delivery with
 * the standardwebhooks package. `answer` picks the status for each delivery ('hang' never answers).
 */
export async function startReceiver(
  options: { secret?: string; port?: number; answer?: (delivery: Delivery, index: number) => Answer | Promise<Answer> } = {},
): Promise<Receiver> {
  const verifier = new Webhook(options.secret ?? WEBHOOK_SECRET);
  const deliveries: Delivery[] = [];
  const waiters = new Set<() => void>();
  let open = 0;
  let peak = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const header = (name: string) => String(req.headers[name] ?? '');
      let verified: true | string = true;
      try {
        verifier.verify(body, { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') });
      } catch (error) {
        verified = (error as Error).message;
      }
      const delivery: Delivery = {
        id: header('webhook-id'),
        timestamp: Number(header('webhook-timestamp')),
        signature: header('webhook-signature'),
        contentType: req.headers['content-type'],
        body,
        traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined,
        verified,
        receivedAt: Date.now(),
      };
      eventTypes.set(delivery, typeof req.headers['webhook-event-type'] === 'string' ? req.headers['webhook-event-type'] : undefined);
      tenants.set(delivery, typeof req.headers['webhook-tenant'] === 'string' ? req.headers['webhook-tenant'] : undefined);
      deliveries.push(delivery);
      for (const wake of waiters) wake();
      void Promise.resolve(options.answer?.(delivery, deliveries.length - 1) ?? 200).then((answer) => {
        if (answer === 'hang') return;
        if (answer === 'reset') {
          req.socket.destroy();
          return;
        }
        if (answer === 'endless') {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          // The status line goes out now, not with the first byte of the body 100 ms later.
          res.flushHeaders();
          const timer = setInterval(() => res.write('.'), 100);
          res.on('close', () => clearInterval(timer));
          return;
        }
        if (typeof answer === 'number') res.writeHead(answer).end();
        else res.writeHead(answer.status, answer.headers).end();
      });
    });
  });
  server.on('connection', (socket) => {
    open += 1;
    peak = Math.max(peak, open);
    socket.on('close', () => (open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/plants?source=test`,
    port,
    deliveries,
    peakConnections: () => peak,
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(deliveries)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(deliveries);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver did not get the expected deliveries within ${timeoutMs} ms; got ${JSON.stringify(deliveries)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (taken, then released), for a subscriber that is down. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

