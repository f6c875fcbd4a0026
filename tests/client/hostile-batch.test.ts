import { createClient, PlantStoreError } from '../../clients/typescript/src/index';
import { hostileServer, json, settle, type HostileServer } from './hostile-server';

/** The parts of an error a user sees: a PlantStoreError's status, code and message, or what else it was. */
const shown = (error: unknown) =>
  error instanceof PlantStoreError ? { type: 'PlantStoreError', status: error.status, code: error.code, message: error.message } : { type: String((error as Error | undefined)?.name), message: String((error as Error | undefined)?.message ?? error) };

describe('the TypeScript client against a server whose batch answer is not one result per operation', () => {
  let server: HostileServer | undefined;

  afterEach(async () => {
    await server?.close();
  });

  it.each([
    ['fewer results than operations', '{"results":[{"status":204}]}', 'the answer is not one result per operation'],
    ['no results array', '{"results":{"status":204}}', 'the answer is not one result per operation'],
    ['a result that is not an object', '{"results":[{"status":204},null]}', 'the answer is not the results of the batch'],
    ['a result without a status', '{"results":[{"status":204},{"etag":"\\"5\\""}]}', 'the answer is not the results of the batch'],
    ['a plant that is not an object', '{"results":[{"status":204},{"status":200,"etag":"\\"5\\"","plant":"Fern"}]}', 'the answer is not the results of the batch'],
    ['a plant that is null', '{"results":[{"status":204},{"status":200,"etag":"\\"5\\"","plant":null}]}', 'the answer is not the results of the batch'],
  ])('when the answer has %s, then batch throws a PlantStoreError with code 0 saying so', async (_kind, body, message) => {
    const hostile = await hostileServer((_req, res) => json(res, body));
    server = hostile;
    const client = createClient({ baseUrl: hostile.origin });

    const error = await settle(client.batch([{ op: 'delete', id: 1n }, { op: 'create', plant: { id: 2n, name: 'Fern' } }]));

    expect(shown(error)).toEqual({ type: 'PlantStoreError', status: 200, code: 0, message });
    expect(hostile.seen.map((request) => `${request.method} ${request.url}`)).toEqual(['POST /plants/batch']);
  });

  it('when a result\'s plant carries an id past 2^53 as a rounded number, then the plant keeps the exact id the operation sent', async () => {
    const hostile = await hostileServer((_req, res) => json(res, '{"results":[{"status":201,"etag":"\\"7\\"","plant":{"id":9007199254740992,"name":"Fern"}}]}'));
    server = hostile;
    const client = createClient({ baseUrl: hostile.origin });

    const [result] = await client.batch([{ op: 'put', id: 9007199254740993n, plant: { name: 'Fern' } }]);

    expect(result).toEqual({ status: 201, etag: '"7"', plant: { id: 9007199254740993n, name: 'Fern' } });
  });
});
