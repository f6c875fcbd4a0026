import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

type Message = { ruleId: string | null; message: string; line: number };
type Linted = { filePath: string; messages: Message[] };

// ESLint loads its flat config with import(), which jest's CommonJS registry cannot run: a child node does it, with
// the project's own eslint.config.mjs. Type-aware rules are off for the fixtures (a virtual file is in no tsconfig);
// the import rules do not need types.
const LINT = `
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
const job = JSON.parse(process.argv[1]);
const eslint = new ESLint({ cwd: process.cwd(), ignore: false, overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }] });
const results = job.text === undefined ? await eslint.lintFiles(job.files) : await eslint.lintText(job.text, { filePath: job.filePath });
process.stdout.write(JSON.stringify(results.map(({ filePath, messages }) => ({ filePath, messages: messages.map(({ ruleId, message, line }) => ({ ruleId, message, line })) }))));
`;

function lint(job: { text: string; filePath: string } | { files: string[] }): Linted[] {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', LINT, JSON.stringify(job)], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as Linted[];
}

const ruleErrors = (results: Linted[], rule: string) => results.flatMap((result) => result.messages.filter((message) => message.ruleId === rule));

describe('the import rules (npm run lint)', () => {
  it('when a file in src/plants imports src/webhooks, then lint fails with the layer rule naming what plants may import', () => {
    const text = "import { createSqliteWebhooks } from '../webhooks';\n\nexport const wired = createSqliteWebhooks;\n";

    const results = lint({ text, filePath: path.join(ROOT, 'src', 'plants', 'layer-fixture.ts') });

    expect(ruleErrors(results, 'import-x/no-restricted-paths')).toEqual([
      {
        ruleId: 'import-x/no-restricted-paths',
        line: 1,
        message: 'Unexpected path "../webhooks" imported in restricted zone. src/plants may import only src/db, src/http, src/resource.ts, the ground floor (docs/architecture.md).',
      },
    ]);
  });

  it('when a file in src/http imports the store, even for a type, then lint fails', () => {
    const text = "import type { Store } from '../store';\n\nexport type Held = Store;\n";

    const results = lint({ text, filePath: path.join(ROOT, 'src', 'http', 'layer-fixture.ts') });

    expect(ruleErrors(results, 'import-x/no-restricted-paths').map((message) => message.message)).toEqual([
      'Unexpected path "../store" imported in restricted zone. src/http may import only src/auth, the ground floor (docs/architecture.md).',
    ]);
  });

  it('when the ground floor imports a room above it, then lint fails', () => {
    const text = "import { AppError } from './errors';\nimport { createStore } from './store';\n\nexport const both = [AppError, createStore];\n";

    const results = lint({ text, filePath: path.join(ROOT, 'src', 'lifecycle.ts') });

    expect(ruleErrors(results, 'import-x/no-restricted-paths').map((message) => message.line)).toEqual([2]);
  });

  it('when a file in src/store imports what it may (db, webhooks), then the layer rule is silent', () => {
    const text = "import { openDatabase } from '../db/database.sqlite';\nimport { createSqliteWebhooks } from '../webhooks';\n\nexport const parts = [openDatabase, createSqliteWebhooks];\n";

    const results = lint({ text, filePath: path.join(ROOT, 'src', 'store', 'layer-fixture.ts') });

    expect(ruleErrors(results, 'import-x/no-restricted-paths')).toEqual([]);
  });

  it('when a file in src/store or src/webhooks imports a resource, then the layer rule refuses it', () => {
    const text = "import { SqlitePlantRepository } from '../plants/plant.repository.sqlite';\n\nexport const parts = [SqlitePlantRepository];\n";

    const inStore = lint({ text, filePath: path.join(ROOT, 'src', 'store', 'layer-fixture.ts') });
    const inWebhooks = lint({ text, filePath: path.join(ROOT, 'src', 'webhooks', 'layer-fixture.ts') });

    expect([inStore, inWebhooks].map((results) => ruleErrors(results, 'import-x/no-restricted-paths').map((message) => message.line))).toEqual([[1], [1]]);
  });

  it('when two files import each other, then lint fails on each with the cycle rule', () => {
    const results = lint({ files: ['tests/fixtures/lint/cycle-a.ts', 'tests/fixtures/lint/cycle-b.ts'] });

    expect(results.map((result) => [path.basename(result.filePath), ruleErrors(result ? [result] : [], 'import-x/no-cycle').map((message) => message.message)])).toEqual([
      ['cycle-a.ts', ['Dependency cycle detected']],
      ['cycle-b.ts', ['Dependency cycle detected']],
    ]);
  });

  it('when docs/architecture.md lists what each folder may import, then its table is the lint configuration', () => {
    const layers = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', "import { GROUND, LAYERS } from './eslint.layers.mjs'; process.stdout.write(JSON.stringify({ GROUND, LAYERS }));"], {
        cwd: ROOT,
        encoding: 'utf8',
      }),
    ) as { GROUND: string[]; LAYERS: Record<string, string[]> };
    const doc = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([^`]+)` \| (.+) \|$/gm)].map(([, room = '', allowed = '']) => [room, allowed.trim()]);

    const expected = [
      ...layers.GROUND.map((file) => [file, 'nothing above the ground floor']),
      ...Object.entries(layers.LAYERS).map(([room, allowed]) => [room, allowed.length === 0 ? 'the ground floor' : `${allowed.map((other) => `\`${other}\``).join(', ')}, the ground floor`]),
    ];
    expect(rows).toEqual(expected);
  });
});
