/**
 * .env.example and the table in docs/configuration.md, written from the config schema's descriptions and
 * defaults (src/config environmentSchema). tests/unit/configuration-docs.test.ts checks both files are current;
 * after a change to the schema, rewrite them with `npx tsx tests/helpers/config-reference.ts --write`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { environmentSchema } from '../../src/config';

const ROOT = path.resolve(__dirname, '..', '..');
export const ENV_EXAMPLE = path.join(ROOT, '.env.example');
export const CONFIGURATION_DOC = path.join(ROOT, 'docs', 'configuration.md');
const TABLE_START = '<!-- variables:start (generated from src/config: npx tsx tests/helpers/config-reference.ts --write) -->';
const TABLE_END = '<!-- variables:end -->';

const ENV_HEADER = `# Every variable the service reads, with its default (generated from src/config; docs/configuration.md says
# more). Copy to .env and run \`node --env-file=.env dist/server.js\`, or give them to the container. An empty value
# counts as unset. A bad value stops the start with a message naming the variable.
`;

/**
 * Each variable as its JSON Schema (zod's public toJSONSchema, on the input side) shows it: its default as written
 * in the environment (a field's `prefault`; undefined: unset by default) and its `.describe()` text.
 */
export const CONFIG_REFERENCE: readonly { name: string; default: string | undefined; description: string }[] = Object.entries(
  z.toJSONSchema(environmentSchema, { io: 'input' }).properties ?? {},
).map(([name, schema]) => {
  const { default: value, description = '' } = typeof schema === 'boolean' ? {} : schema;
  if (value !== undefined && typeof value !== 'string') throw new Error(`${name}: a default is written as the environment holds it, a string`);
  return { name, default: value, description };
});

/** Words to lines of at most `width` characters, each starting with `prefix`. */
function wrap(text: string, width: number, prefix: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && prefix.length + line.length + 1 + word.length > width) {
      lines.push(prefix + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(prefix + line);
  return lines;
}

export function renderEnvExample(): string {
  const entries = CONFIG_REFERENCE.map((variable) => [...wrap(variable.description, 118, '# '), `${variable.name}=${variable.default ?? ''}`].join('\n'));
  return `${ENV_HEADER}\n${entries.join('\n')}\n`;
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

export function renderConfigurationTable(): string {
  const rows = CONFIG_REFERENCE.map(
    (variable) => `| \`${variable.name}\` | ${variable.default === undefined || variable.default === '' ? 'none' : `\`${variable.default}\``} | ${cell(variable.description)} |`,
  );
  return [TABLE_START, '', '| Variable | Default | Meaning |', '|---|---|---|', ...rows, '', TABLE_END].join('\n');
}

/** The document with its generated table replaced by the current one. */
export function withCurrentTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start === -1 || end === -1) throw new Error(`${CONFIGURATION_DOC} lacks the ${TABLE_START} … ${TABLE_END} markers`);
  return doc.slice(0, start) + renderConfigurationTable() + doc.slice(end + TABLE_END.length);
}

if (require.main === module && process.argv.includes('--write')) {
  writeFileSync(ENV_EXAMPLE, renderEnvExample());
  writeFileSync(CONFIGURATION_DOC, withCurrentTable(readFileSync(CONFIGURATION_DOC, 'utf8')));
}
