/**
 * GET /plants's query, from the request's strings to what a store reads: the sort, the search key of q, where the
 * page starts (after an id, or after the keys a cursor carries) and whether to count. Owns the cursor's format:
 * base64url of JSON the service alone writes and reads; clients follow the Link and never look inside. Knows no
 * SQL and no HTTP beyond the AppErrors it throws.
 */
import { createHash } from 'node:crypto';
import { SHARED_TENANT, type TenantKey } from '../tenant';
import { AppError } from '../errors';
import { invalid } from '../http/input';
import { listQueryExtraSchema, listQuerySchema, searchKey, SORTS, type Sort } from './plant.schemas';

/** The keys of a page's last plant in its sort's order, the id last: [name_key, name, id] or [time, id]. */
export type SortKeys = readonly [string, string, bigint] | readonly [string, bigint];

/** A list as a store reads it. Fields beyond limit are optional so a store's own callers (tests, tools) stay short. */
export type PlantListQuery = {
  limit: number;
  tag?: string;
  /** The search key of q (plant.schemas.ts searchKey): name_key holds it as a substring. */
  search?: string;
  sort?: Sort;
  /** sort id or -id: the last id of the previous page. */
  after?: bigint;
  /** The other sorts: the previous page's last keys. */
  from?: SortKeys;
  /** Count every plant matching tag and search. */
  count?: boolean;
};

/** The query as the request gave it, and the tenant it reads: what the next Link repeats and a cursor is bound to. */
export type ListRequest = { tenant: TenantKey; limit: number; tag?: string; q?: string; sort: Sort; count: boolean; read: PlantListQuery };

const listRequestSchema = listQuerySchema.extend(listQueryExtraSchema.shape);

// A name of 200 code points may grow 18-fold under NFKC (U+FDFA): the longest cursor the service writes, with the
// longest q and tag, is about 10,800 characters (a request line must stay within Node's 16 KiB of headers anyway).
const CURSOR_MAX = 12_288;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ID = /^(?:0|-?[1-9][0-9]{0,18})$/;
// A key string a cursor may carry: a name or name key holds no control character (the name rule) and is well formed.
const KEY_TEXT = /^[^\u0000-\u001F\u007F]*$/;

export const isIdSort = (sort: Sort): boolean => sort === 'id' || sort === '-id';
const isSort = (value: string): value is Sort => (SORTS as readonly string[]).includes(value);

type CursorBody = { s: Sort; q?: string; t?: string; n?: string; k: (string | number)[] };

/**
 * The tenant a cursor is bound to, as its `n`: the first 9 bytes of the SHA-256 of the tenant's key, base64url (12
 * characters), so a cursor names no tenant; none for the shared tenant, whose cursors are as they always were.
 */
const tenantMark = (tenant: TenantKey): string | undefined => (tenant === SHARED_TENANT ? undefined : createHash('sha256').update(tenant).digest().subarray(0, 9).toString('base64url'));

/** The cursor to the page after the one whose last plant has `keys`, bound to this tenant, sort, q and tag. */
export function cursorOf(request: Pick<ListRequest, 'tenant' | 'sort' | 'q' | 'tag'>, keys: SortKeys): string {
  const body: CursorBody = { s: request.sort, k: keys.map((key) => (typeof key === 'bigint' ? String(key) : key)) };
  if (request.q !== undefined) body.q = request.q;
  if (request.tag !== undefined) body.t = request.tag;
  const mark = tenantMark(request.tenant);
  if (mark !== undefined) body.n = mark;
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const cursorError = (code: 'malformed' | 'mismatch', message: string) =>
  new AppError('invalid_cursor', `cursor: ${message}`, { fields: [{ field: 'cursor', code, message }] });

function parseCursorBody(text: string): CursorBody {
  // Made only when thrown: an error's stack is taken when it is constructed, and most cursors are good.
  const malformed = () => cursorError('malformed', 'is not a cursor this service made; follow the Link of the previous page, or start again without cursor.');
  if (text.length > CURSOR_MAX || !/^[A-Za-z0-9_-]+$/.test(text)) throw malformed();
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw malformed();
  const { s, q, t, n, k } = body as Record<string, unknown>;
  const optionalText = (value: unknown) => value === undefined || typeof value === 'string';
  if (typeof s !== 'string' || !isSort(s) || isIdSort(s) || !optionalText(q) || !optionalText(t) || !optionalText(n) || !Array.isArray(k)) throw malformed();
  if (!keysFit(s, k)) throw malformed();
  return body as CursorBody;
}

/** The keys a sort's cursor carries: strings of its columns, then the id in decimal. */
function keysFit(sort: Sort, keys: unknown[]): boolean {
  const byName = sort === 'name' || sort === '-name';
  if (keys.length !== (byName ? 3 : 2)) return false;
  const texts = keys.slice(0, -1);
  const id = keys.at(-1);
  if (typeof id !== 'string' || !ID.test(id) || BigInt.asIntN(64, BigInt(id)) !== BigInt(id)) return false;
  return texts.every((key) => typeof key === 'string' && key.isWellFormed() && KEY_TEXT.test(key) && (byName || TIME.test(key)));
}

/** The keys a valid cursor made for exactly this tenant, sort, q and tag carries; a 400 naming cursor otherwise. */
function keysOfCursor(text: string, tenant: TenantKey, sort: Sort, q: string | undefined, tag: string | undefined): SortKeys {
  const body = parseCursorBody(text);
  if (body.n !== tenantMark(tenant)) {
    throw cursorError('mismatch', 'was made for another tenant than this request acts in; start again without cursor.');
  }
  if (body.s !== sort || body.q !== q || body.t !== tag) {
    throw cursorError('mismatch', 'was made for another sort, q or tag than this request has; follow the Link as it is, or start again without cursor.');
  }
  const id = BigInt(body.k.at(-1) as string);
  return body.k.length === 3 ? [body.k[0] as string, body.k[1] as string, id] : [body.k[0] as string, id];
}

const conflict = (field: 'after' | 'cursor', message: string) =>
  new AppError('paging_conflict', `${field}: ${message}`, { fields: [{ field, code: 'conflict', message }] });

/**
 * The request's query in `tenant`, checked in this order: each parameter's own rule (40012, every problem named at
 * once), an unknown sort (40040), after and cursor against each other and the sort (40042), the cursor itself
 * (40041, also when it was made in another tenant).
 */
export function parseListRequest(query: Record<string, unknown>, prefer: string | string[] | undefined, tenant: TenantKey): ListRequest {
  const parsed = listRequestSchema.safeParse(query);
  if (!parsed.success) throw invalid('invalid_parameter', parsed.error, query);
  const { limit, after, tag, q, cursor } = parsed.data;
  const sortText = parsed.data.sort ?? 'id';
  if (!isSort(sortText)) {
    const message = `must be one of ${SORTS.join(', ')}; - before a member is descending.`;
    throw new AppError('unknown_sort', `sort: ${message}`, { fields: [{ field: 'sort', code: 'unknown_value', message }] });
  }
  const sort = sortText;
  if (after !== undefined && cursor !== undefined) throw conflict('cursor', 'cannot come with after; send the one the Link of the previous page carries.');
  if (after !== undefined && !isIdSort(sort)) throw conflict('after', `goes with sort=id or sort=-id only; with sort=${sort} follow the Link, which carries a cursor.`);
  if (cursor !== undefined && isIdSort(sort)) throw conflict('cursor', `goes with the sorts other than id and -id; with sort=${sort} use after, as the Link does.`);
  const count = prefersExactCount(prefer);
  const read: PlantListQuery = { limit, sort, count };
  if (tag !== undefined) read.tag = tag;
  if (q !== undefined) read.search = searchKey(q);
  if (after !== undefined) read.after = after;
  if (cursor !== undefined) read.from = keysOfCursor(cursor, tenant, sort, q, tag);
  const request: ListRequest = { tenant, limit, sort, count, read };
  if (tag !== undefined) request.tag = tag;
  if (q !== undefined) request.q = q;
  return request;
}

/**
 * Whether Prefer (RFC 7240) asks for count=exact: preferences are comma-separated, each `token[=value]` with
 * optional `;` parameters; names compare without case, the value may be quoted. Other preferences are ignored.
 */
export function prefersExactCount(prefer: string | string[] | undefined): boolean {
  if (prefer === undefined) return false;
  const values = Array.isArray(prefer) ? prefer : [prefer];
  return values.some((value) =>
    value.split(',').some((preference) => {
      const [name = '', setting = ''] = (preference.split(';', 1)[0] as string).split('=', 2).map((part) => part.trim());
      return name.toLowerCase() === 'count' && setting.replace(/^"(.*)"$/, '$1').toLowerCase() === 'exact';
    }),
  );
}
