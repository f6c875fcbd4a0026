import autocannon from 'autocannon';
import { uniqueId } from '../helpers/plants';
import { startServer } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

describe('a closed-loop client is never overload', () => {
  it('when 64 connections send creates back to back for 8 s, however slow the machine, then not one is shed', async () => {
    const server = await startServer({ LOAD_SHED_LAG_MS: '100' });

    const result = await autocannon({
      url: server.url,
      connections: 64,
      duration: 8,
      timeout: 20,
      requests: [
        {
          method: 'POST',
          path: '/plants',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          setupRequest: (request) => {
            const id = uniqueId();
            return { ...request, body: JSON.stringify({ id, name: `Closed loop ${id}` }) };
          },
        },
      ],
    });
    await server.stop();

    expect(result.requests.total).toBeGreaterThan(64);
    expect({ shed: result.statusCodeStats?.['503']?.count ?? 0, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }).toEqual({
      shed: 0,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
    });
  });
});
