import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { requestClasses } from '../../src/http/request-classes';

// Node builds each request and response with Express's prototypes in place, so Express's own prototype change
// on every request is a no-op (why: src/http/request-classes.ts); Express and Node still work as before.
describe('requests built with Express prototypes', () => {
  it('when a request arrives, then Node builds it with Express prototypes and Express answers through them', async () => {
    const app = express();
    app.get('/x', (req, res) => {
      res.json({ path: req.path, isRequest: req instanceof http.IncomingMessage, isResponse: res instanceof http.ServerResponse });
    });
    const server = http.createServer(requestClasses(app), app);
    const built: boolean[] = [];
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      built.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answers = await Promise.all([1, 2].map(() => fetch(`http://127.0.0.1:${port}/x?q=1`).then(async (response) => ({ status: response.status, body: (await response.json()) }))));

      expect(answers).toEqual([1, 2].map(() => ({ status: 200, body: { path: '/x', isRequest: true, isResponse: true } })));
      expect(built).toEqual([true, true]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
