import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { startServer } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { sleep } from '../helpers/common';
import { perProcess } from '../helpers/test-workers';

const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };

perProcess('SIGSTOP freezes the one process; above one worker it would stop the supervisor, not the loops that serve').describe('a process stopped and continued', () => {
  it('when the server is frozen for 300 ms by SIGSTOP, then a create 20 ms after SIGCONT answers 200, not 503', async () => {
    const server = await startServer({ LOAD_SHED_LAG_MS: '100' });
    expect((await rawRequest(server.url, { headers, body: JSON.stringify(aNewPlant()) })).status).toBe(200);

    server.child.kill('SIGSTOP');
    await sleep(300);
    server.child.kill('SIGCONT');
    await sleep(20);
    const response = await rawRequest(server.url, { headers, body: JSON.stringify(aNewPlant()) });
    await server.stop();

    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: expect.objectContaining({ tag: 'indoor' }) });
  });
});
