import { bearer } from '../helpers/test-app';
import { appForAll, perTest } from '../helpers/fixtures';

const fixtures = perTest();

describe('GET /docs', () => {
  const app = appForAll();

  it('when read without a token, then it is an HTML page whose links are all relative to it', async () => {
    const response = await app.request.get('/docs');

    expect({ status: response.status, type: response.headers['content-type'] }).toEqual({ status: 200, type: 'text/html; charset=utf-8' });
    const links = [...response.text.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, link]) => link);
    expect(links).toEqual(['docs/assets/favicon-32x32.png', 'docs/assets/swagger-ui.css', 'docs/assets/swagger-ui-bundle.js', 'docs/assets/docs.js']);
    expect(response.text).not.toMatch(/<script>|<style|style="|https?:\/\//);
  });

  it('when the page is served, then its policy is narrow: no eval, no inline script or style, no other origin', async () => {
    const response = await app.request.get('/docs');

    expect(response.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  });

  it('when any other path is answered, then the strict policy stays as it was', async () => {
    const policies = await Promise.all(['/healthz', '/openapi.json', '/docs/assets/docs.js'].map(async (path) => (await app.request.get(path)).headers['content-security-policy']));

    expect(new Set(policies).size).toBe(1);
    expect(policies[0]).toContain("script-src 'self'");
    expect(policies[0]).toContain("default-src 'self'");
    expect(policies[0]).not.toContain('unsafe-eval');
  });

  it.each([
    ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
    ['swagger-ui.css', 'text/css; charset=utf-8'],
    ['favicon-32x32.png', 'image/png'],
    ['docs.js', 'text/javascript; charset=utf-8'],
  ])('when the asset %s is asked for, then the service serves it from its own files', async (file, type) => {
    const response = await app.request.get(`/docs/assets/${file}`);

    expect({ status: response.status, type: response.headers['content-type'], cache: response.headers['cache-control'] }).toEqual({
      status: 200,
      type,
      cache: 'public, max-age=3600',
    });
  });

  it.each(['package.json', 'swagger-ui-bundle.js.map', '..%2Fpackage.json', 'index.html'])('when %s is asked for under the assets, then nothing is served', async (file) => {
    const anonymous = await app.request.get(`/docs/assets/${file}`);
    const withToken = await app.request.get(`/docs/assets/${file}`).set(bearer());

    expect([anonymous.status, withToken.status]).toEqual([401, 404]);
  });

  it('when /docs/ is asked for, then a relative redirect leads to /docs under whatever prefix the client used', async () => {
    const response = await app.request.get('/docs/');

    expect({ status: response.status, location: response.headers.location }).toEqual({ status: 301, location: '../docs' });
  });
});

describe('DOCS_ENABLED=false', () => {
  it('when /docs is asked for, then there is no page: 401 without a token, 404 with one', async () => {
    const app = await fixtures.app({ DOCS_ENABLED: 'false' });

    const anonymous = await app.request.get('/docs');
    const withToken = await app.request.get('/docs').set(bearer());
    const asset = await app.request.get('/docs/assets/swagger-ui-bundle.js').set(bearer());

    expect([anonymous.status, withToken.status, asset.status]).toEqual([401, 404, 404]);
  });
});
