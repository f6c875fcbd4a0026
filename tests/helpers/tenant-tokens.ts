/**
 * Two tenants, alice and bob, for the isolation suites (tests/api/tenants-*.test.ts): static tokens in an
 * AUTH_TOKENS_FILE whose lines name their tenant (`<token> <scopes> tenant=<name>`, docs/auth.md "Tenants"), and
 * an operator's token with plants:admin (its own tenant "ops") that acts in a tenant it names with Act-As-Tenant.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ALICE = 'alice-token-0123456789abcdefghijklmnopqrstuvwxyz';
export const BOB = 'bob-token-0123456789abcdefghijklmnopqrstuvwxyz';
export const ADMIN = 'admin-token-0123456789abcdefghijklmnopqrstuvwxyz';

/** The lines as a user writes them: alice and bob read and write in their own tenant; the operator may act in any. */
export const TENANT_TOKEN_LINES = [
  `${ALICE} plants:read plants:write tenant=alice`,
  `${BOB} plants:read plants:write tenant=bob`,
  `${ADMIN} plants:read plants:write plants:admin tenant=ops`,
];

/** Writes `lines` to a token file for the file's tests (removed after them) and returns its path. */
export function tenantTokenFileForAll(lines: readonly string[] = TENANT_TOKEN_LINES): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-tenant-tokens-'));
  const file = path.join(dir, 'tokens');
  writeFileSync(file, `${lines.join('\n')}\n`);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return file;
}

/** The environment of a tenants-on app: tokens from `file` only (AUTH_TOKENS names no tenant), TENANT_CLAIM=sub. */
export const tenantEnv = (file: string, extra: Record<string, string> = {}): Record<string, string> => ({
  AUTH_TOKENS: '',
  AUTH_TOKENS_FILE: file,
  TENANT_CLAIM: 'sub',
  ...extra,
});

export type Caller = 'alice' | 'bob';
const TOKENS: Record<Caller, string> = { alice: ALICE, bob: BOB };

/** The headers of a request by alice or bob with their own token. */
export const as = (caller: Caller): Record<string, string> => ({ Authorization: `Bearer ${TOKENS[caller]}` });

/** The headers of the operator's request acting in tenant `name` (percent-encoded as the header carries it). */
export const actingAs = (name: string): Record<string, string> => ({ Authorization: `Bearer ${ADMIN}`, 'Act-As-Tenant': encodeURIComponent(name) });

/** A body with each occurrence of the id as text replaced, to compare answers about different ids. */
export const withoutId = (body: unknown, id: number | bigint | string): string => JSON.stringify(body).split(String(id)).join('<id>');
