import type { AppError } from '../../src/errors';
import { cursorOf, parseListRequest } from '../../src/plants/plant.list-query';
import { SHARED_TENANT, type TenantKey } from '../../src/tenant';

// A cursor is bound to the tenant it was made in (issue 35): another tenant's is the 400 a cursor for another sort
// gets, so no request pages through a key space not its own; the shared tenant's cursors are as they always were.

const ACME = 'acme' as TenantKey;
const BOB = 'bob' as TenantKey;
const KEYS = ['2026-11-27T09:41:07.250Z', 42n] as const;

const cursorIn = (tenant: TenantKey) => cursorOf({ tenant, sort: 'createdAt', tag: 'shade' }, KEYS);
const body = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;

/** The answer to a page after `cursor` in `tenant`: its keys, or the error's cause (invalid_cursor is 40041) and field problem. */
function follow(cursor: string, tenant: TenantKey) {
  try {
    return parseListRequest({ sort: 'createdAt', tag: 'shade', cursor }, undefined, tenant).read.from;
  } catch (error) {
    const { reason, fields } = error as AppError;
    return { reason, field: fields?.[0]?.field, problem: fields?.[0]?.code, message: fields?.[0]?.message };
  }
}

const MISMATCH = {
  reason: 'invalid_cursor',
  field: 'cursor',
  problem: 'mismatch',
  message: 'was made for another tenant than this request acts in; start again without cursor.',
};

describe('a list cursor and its tenant', () => {
  it('when the shared tenant makes a cursor, then it is the format cursors always had: sort, tag and keys only', () => {
    expect(body(cursorIn(SHARED_TENANT))).toEqual({ s: 'createdAt', t: 'shade', k: ['2026-11-27T09:41:07.250Z', '42'] });
  });

  it('when a tenant makes a cursor, then it names a hash of the tenant, never the tenant', () => {
    const { n } = body(cursorIn(ACME));

    expect(n).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(Buffer.from(cursorIn(ACME), 'base64url').toString('utf8')).not.toContain('acme');
  });

  it('when a cursor is followed in the tenant that made it, then it gives its keys', () => {
    expect([follow(cursorIn(ACME), ACME), follow(cursorIn(SHARED_TENANT), SHARED_TENANT)]).toEqual([KEYS, KEYS]);
  });

  it('when a cursor is followed in another tenant, then it is invalid_cursor (400 40041) naming cursor, code mismatch', () => {
    expect([follow(cursorIn(ACME), BOB), follow(cursorIn(ACME), SHARED_TENANT), follow(cursorIn(SHARED_TENANT), ACME)]).toEqual([MISMATCH, MISMATCH, MISMATCH]);
  });
});
