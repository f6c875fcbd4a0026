import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { rawRequest } from '../helpers/raw-request';
import { appForAll } from '../helpers/fixtures';

const run = promisify(execFile);
const REDOCLY = require.resolve('@redocly/cli/bin/cli.js');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const app = appForAll();
let document: Record<string, any>;

beforeAll(async () => {
  document = (await app.request.get('/openapi.json')).body;
});

describe('the document GET /openapi.json serves', () => {
  it("when linted by @redocly/cli with its recommended rules, then it has no error and no warning", async () => {
    // In a directory of its own, so no redocly.yaml can change the rules; no telemetry, no update check.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-lint-'));
    writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document));

    const { stdout } = await run(process.execPath, [REDOCLY, 'lint', 'openapi.json', '--extends=recommended', '--format=json'], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    rmSync(dir, { recursive: true, force: true });
    const report = JSON.parse(stdout) as { totals: unknown; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };

    expect({
      totals: report.totals,
      problems: report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`),
    }).toEqual({ totals: { errors: 0, warnings: 0, ignored: 0 }, problems: [] });
  });

  it('when its operations are listed, then each has a summary, an operationId and a declared tag', () => {
    const declared = (document.tags as { name: string }[]).map((tag) => tag.name);
    const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([route, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({ route, method, operation })),
    );
    const tagged = (tags: unknown) => Array.isArray(tags) && tags.length > 0 && tags.every((tag) => declared.includes(String(tag)));
    const incomplete = operations
      .filter(({ operation }) => typeof operation.summary !== 'string' || typeof operation.operationId !== 'string' || !tagged(operation.tags))
      .map(({ route, method }) => `${method} ${route}`);

    expect(operations.length).toBeGreaterThanOrEqual(4);
    expect(incomplete).toEqual([]);
    expect(document.servers).toEqual([{ url: '/' }]);
  });

  it('when request headers pass 16 KiB, then the documented 431 comes back from the HTTP server', async () => {
    const response = await rawRequest(app.url, { method: 'GET', path: '/healthz', headers: { 'X-Padding': 'x'.repeat(17 * 1024) } });

    expect(response.status).toBe(431);
    expect(Object.keys(document.paths['/healthz'].get.responses)).toContain('431');
  });
});
