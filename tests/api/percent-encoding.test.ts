import http from 'node:http';
import { aNewPlant, withTimes } from '../helpers/plants';
import { appForAll } from '../helpers/fixtures';
import { untilLogged } from '../helpers/common';
import { bearer, postPlant } from '../helpers/test-app';

const app = appForAll();

type Answer = { status: number; body: unknown };

/** The request target exactly as written: a client library would re-encode or refuse these paths. */
function send(method: string, target: string): Promise<Answer> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers: bearer() }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        // Resolved with its request line in app.logs, and any fault line the service wrote before it.
        void untilLogged(app, (line) => line.msg === 'request' && line.reqId === res.headers['x-request-id']).then(() =>
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : (JSON.parse(text) as unknown) }),
        );
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const MALFORMED = 'has malformed percent-encoding; each % must start a UTF-8 byte written as two hex digits (%20, %C3%A9).';
const faults = () => app.logs.filter((line) => line.level >= 50 || JSON.stringify(line).includes('URIError'));

describe('malformed percent-encoding in the path', () => {
  it.each([
    ['GET', '/plants/%FF'],
    ['GET', '/plants/%E0%A4%A'],
    ['GET', '/plants/%'],
    ['GET', '/PLANTS/%FF/'],
    ['DELETE', '/plants/%FF'],
  ])('when %s %s arrives, then it answers 400 invalid_parameter naming id and logs no fault', async (method, target) => {
    const answer = await send(method, target);

    expect(answer).toEqual({ status: 400, body: { error: 40012, message: `id: ${MALFORMED}` } });
    expect(faults()).toEqual([]);
  });

  it('when HEAD /plants/%C0%AF (an overlong slash) arrives, then it answers 400 without a body and logs no fault', async () => {
    const answer = await send('HEAD', '/plants/%C0%AF');

    expect(answer).toEqual({ status: 400, body: undefined });
    expect(app.logs.filter((line) => line.msg === 'request' && line.method === 'HEAD').at(-1)).toMatchObject({ status: 400, error: 40012 });
    expect(faults()).toEqual([]);
  });

  it('when the id is well-formed percent-encoding of digits, then it is the plant with that id', async () => {
    const plant = aNewPlant();
    await postPlant(app, plant);
    const encoded = [...String(plant.id)].map((digit) => `%${digit.charCodeAt(0).toString(16)}`).join('');

    const answer = await send('GET', `/plants/${encoded}`);

    expect(answer).toEqual({ status: 200, body: withTimes(plant) });
  });

  it('when another path parameter (a docs asset) is malformed, then it is a 400, not a 500', async () => {
    const answer = await send('GET', '/docs/assets/%FF');

    expect(answer).toEqual({
      status: 400,
      body: { error: 40012, message: 'The path has malformed percent-encoding; each % must start a UTF-8 byte written as two hex digits.' },
    });
    expect(faults()).toEqual([]);
  });
});

describe('malformed percent-encoding in the query of GET /plants', () => {
  it.each([
    ['tag', '/plants?tag=%FF'],
    ['after', '/plants?limit=5&after=%E0%A4%A'],
    ['limit', '/plants?limit=%'],
    ['tag', '/plants?tag=ok&tag=%C0%AF'],
    ['a query parameter name', '/plants?%FF=1'],
  ])('when %s is malformed (%s), then it answers 400 invalid_parameter naming it', async (name, target) => {
    const answer = await send('GET', target);

    expect(answer).toEqual({ status: 400, body: { error: 40012, message: `${name}: ${MALFORMED}` } });
    expect(faults()).toEqual([]);
  });

  it('when a tag is well-formed percent-encoding, then it is decoded and matched', async () => {
    const plant = aNewPlant({ tag: `caf\u00e9 ${Date.now()}` });
    await postPlant(app, plant);

    const answer = await send('GET', `/plants?tag=${encodeURIComponent(plant.tag as string)}`);

    expect(answer).toEqual({ status: 200, body: [withTimes(plant)] });
  });
});
