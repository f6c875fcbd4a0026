import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// Issue 32: a resource is a folder and one registration (docs/architecture.md, "Adding a resource"). Outside
// src/plants/, the composition root and the migrations, no code imports the plant module or names plants.
const ROOT = path.resolve(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');

/**
 * Where plants may be named: the resource itself and the composition roots that register it. src/cli/ is the
 * plant-store command's: it wires the plants' transfer to src/backup (docs/decisions/architecture.md).
 */
const HOME = ['src/plants/', 'src/resources.ts', 'src/service.ts', 'src/server.ts', 'src/token.cli.ts', 'src/cli/'];

/** Public names that keep the word: metric names, the scope strings, the product and the CLI. */
const PUBLIC = [/plants_[a-z_]+/g, /plants:(?:read|write)/g, /plant-store/g, /Plant Store/g];

type Allowed = { file: string; reason: string; texts?: RegExp };

/**
 * What still names plants outside their home, each with why: public text, which a test elsewhere holds byte for
 * byte, and SQL names (`texts`); an entry without `texts` would allow a whole file.
 */
const ALLOWED: Allowed[] = [
  // The webhook outbox's table keys each event by the plant it is about.
  { file: 'src/webhooks/outbox.sqlite.ts', reason: 'the plant_id column of webhook_outbox', texts: /\bplant_id\b/ },
  // Backups copy the SQLite file whole: they check its plants table and name their files plants-<time>.db.
  { file: 'src/backup/backup.ts', reason: 'backups: the plants table and file name', texts: /^plants$/ },
  { file: 'src/backup/restore.ts', reason: 'backups: the plant counts a restore checks', texts: /plants/ },
  { file: 'src/backup/restore-mark.ts', reason: 'backups: the plant event positions a restore moves past', texts: /plant_event/ },
  { file: 'src/backup/scheduler.ts', reason: 'backups: their file names', texts: /^plants-?$|^\/\^plants-/ },
  { file: 'src/backup/sidecar.ts', reason: 'backups: the plant count in the sidecar', texts: /^plants$/ },
  { file: 'src/backup/store-file.ts', reason: 'backups: what makes a file a Plant Store', texts: /plants/ },
  // Public text: the catalogue rows (docs/api.md and the OpenAPI document list them), the Bearer realm, the
  // document's description, the environment's descriptions and defaults (.env.example, docs/configuration.md).
  { file: 'src/errors.ts', reason: 'catalogue rows: public codes and messages', texts: /^(?:plant_not_found|id: a plant with this id .*|No plant has this id\.|The plant has changed since .*)$/ },
  { file: 'src/auth/auth.middleware.ts', reason: 'the public Bearer realm (RFC 6750)', texts: /realm="plants"/ },
  { file: 'src/openapi-responses.ts', reason: 'the public Bearer realm, as documented', texts: /realm="plants"/ },
  { file: 'src/openapi.ts', reason: 'the document\'s description of the product', texts: /^Keeps a store of plants\./ },
  { file: 'src/auth/jwks-cache.ts', reason: 'error codes an operator may match in the logs', texts: /^ERR_PLANTS_JWKS?_(?:UNAVAILABLE|UNUSABLE)$/ },
  { file: 'src/auth/jwt-verifier.ts', reason: 'error codes an operator may match in the logs', texts: /^ERR_PLANTS_JWKS?_(?:UNAVAILABLE|UNUSABLE)$/ },
  { file: 'src/metrics/webhook-metrics.ts', reason: 'the HELP text /metrics serves', texts: /commit (?:\(with its plant\)|with the plant)/ },
  { file: 'src/docs/docs.page.ts', reason: 'the script the /docs page serves, byte for byte', texts: /turns plant 9007199254740993 into/ },
  {
    file: 'src/config/',
    reason: 'variable descriptions and defaults: the generated .env.example and configuration table',
    texts: /file:\.\/data\/plants\.db|`plants-<time>\.db`|GET \/plants\/events|^New-plant webhook|plant\.created/,
  },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The identifiers, string and template texts and regular expressions of a file: its code without comments. */
function namesIn(file: string, text: string = readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) found.push(node.text);
    else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) || ts.isRegularExpressionLiteral(node)) found.push(node.text);
    node.forEachChild(visit);
  };
  visit(source);
  return found;
}

const withoutPublic = (text: string): string => PUBLIC.reduce((rest, name) => rest.replace(name, ''), text);

function violations(): string[] {
  return sourceFiles(SRC).flatMap((full) => {
    const file = path.relative(ROOT, full).split(path.sep).join('/');
    if (HOME.some((home) => file.startsWith(home))) return [];
    const allowed = ALLOWED.filter((entry) => file.startsWith(entry.file));
    if (allowed.some((entry) => entry.texts === undefined)) return [];
    return namesIn(full)
      .filter((text) => /plant/i.test(withoutPublic(text)))
      .filter((text) => !allowed.some((entry) => entry.texts?.test(text) === true))
      .map((text) => `${file}: ${text}`);
  });
}

describe('names outside the plant resource', () => {
  it('when the source outside src/plants/ and the composition root is read, then nothing imports or names plants but the listed exceptions', () => {
    expect(violations()).toEqual([]);
  });

  it('when a file outside the home names plants in code, then the check finds it', () => {
    const text = [
      '// A comment about plants is fine.',
      "import type { PlantFeed } from '../plants/plant.feed';",
      "export const plantCount = (feed: PlantFeed | undefined): string => (feed === undefined ? 'plants_feed_streams_open plants:read' : '/plants/{id}');",
    ].join('\n');

    const found = namesIn('src/http/named.ts', text).filter((name) => /plant/i.test(withoutPublic(name)));

    expect(found).toEqual(['PlantFeed', '../plants/plant.feed', 'plantCount', 'PlantFeed', '/plants/{id}']);
  });

  it('when every allowance is read, then each still matches a file (a stale entry is removed)', () => {
    const files = sourceFiles(SRC).map((full) => path.relative(ROOT, full).split(path.sep).join('/'));

    expect(ALLOWED.filter((entry) => !files.some((file) => file.startsWith(entry.file))).map((entry) => entry.file)).toEqual([]);
  });
});
