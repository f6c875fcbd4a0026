import { readFileSync } from 'node:fs';
import { CONFIGURATION_DOC, ENV_EXAMPLE, renderEnvExample, withCurrentTable } from '../helpers/config-reference';

// The schema in src/config describes each variable once; these files are written from it. A failure here means
// one was edited by hand or the schema changed: run `npx tsx tests/helpers/config-reference.ts --write`.
describe('the configuration reference', () => {
  it('when .env.example is compared with the schema, then it holds every variable with its default and description', () => {
    expect(readFileSync(ENV_EXAMPLE, 'utf8')).toBe(renderEnvExample());
  });

  it('when docs/configuration.md is compared with the schema, then its table holds every variable with its default and meaning', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');

    expect(doc).toBe(withCurrentTable(doc));
  });

  it('when the table is read back, then it lists PORT with 3000 and WEBHOOK_SECRET with no default', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');

    expect(doc).toContain('| `PORT` | `3000` | TCP port of the public listener. |');
    expect(doc).toMatch(/^\| `WEBHOOK_SECRET` \| none \| Standard Webhooks signing secret/m);
  });
});
