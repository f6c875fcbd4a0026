// Writes src/openapi.ts, the client's request and response types, from the OpenAPI document a running service
// serves: `npm run generate -- [document URL] [output file]`. Every int64 becomes bigint, as the client parses it.
// tests/client/generated-types.test.ts regenerates from the current document and fails on any difference.
import { writeFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import ts from 'typescript';

const [source = 'http://127.0.0.1:3000/openapi.json', output = new URL('../src/openapi.ts', import.meta.url)] = process.argv.slice(2);
const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);

const response = await fetch(source);
if (!response.ok) throw new Error(`GET ${source} answered ${response.status}`);
const ast = await openapiTS(await response.json(), {
  transform: (schema) => (schema.format === 'int64' ? BIGINT : undefined),
});
writeFileSync(output, COMMENT_HEADER + astToString(ast));
