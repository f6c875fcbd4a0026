import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * An AUTH_TOKENS_FILE for the file's tests, removed after them: one digest line per token with the scopes it
 * grants (`plants:read`, `plants:write`, or both separated by a space). Returns the file's path.
 */
export function tokenFileForAll(grants: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-tokens-'));
  const file = path.join(dir, 'tokens');
  const digest = (token: string) => createHash('sha256').update(token).digest('hex');
  writeFileSync(file, Object.entries(grants).map(([token, scopes]) => `sha256:${digest(token)} ${scopes}\n`).join(''));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return file;
}
