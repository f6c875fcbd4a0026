/**
 * GET /plants: one page of a query (search, sort, tag, count) with the feed position it reflects, and every page
 * of a query in turn. A next page is fetched only from the service's own Link, on baseUrl's origin, and only
 * when that link moves forward; the client never parses the opaque cursor.
 */
import type { Transport } from './http.js';
import type { operations } from './openapi.js';
import { parsePlants, protocolError, readText, toId, toInt64, type PlantStoreError, type StoredPlant } from './wire.js';

/** id (the default), name, createdAt or updatedAt; `-` before it for descending. */
export type PlantSort = NonNullable<NonNullable<operations['listPlants']['parameters']['query']>['sort']>;
/** The plants whose name contains `q` (without case, NFKC) and whose tag is `tag`, in `sort` order, `limit` a page. */
export type PlantQuery = { q?: string; sort?: PlantSort; tag?: string; limit?: number };
export type ListQuery = PlantQuery & {
  /** Ask for `total` (Prefer: count=exact): every plant matching q and tag, whatever the page. */
  count?: boolean;
  /** With sort id (the default) or -id: the page after this id (below it for -id). */
  after?: bigint;
  /** A page's `next`: fetches the page after it (q, sort, tag and limit travel inside; `count` still applies). */
  next?: string;
};
export type Page = {
  plants: StoredPlant[];
  /** The next page's address (the service's Link), to pass back as `next`; absent on the last page. */
  next?: string;
  /** With sort id or -id, the `after` of the next page. */
  nextAfter?: bigint;
  total?: number;
  /** The position of the last change these plants reflect: `changes({ after: position })` continues exactly there. */
  position: bigint;
};
export type CallOptions = { signal?: AbortSignal };

type Fetched = Page & { refused?: PlantStoreError };

const nextTarget = (link: string | null) => (link === null ? undefined : /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1]);

export function listUrl(base: string, query: ListQuery): string {
  const search = new URLSearchParams();
  if (query.limit !== undefined) search.set('limit', String(query.limit));
  if (query.after !== undefined) search.set('after', toId(query.after).toString());
  if (query.tag !== undefined) search.set('tag', query.tag);
  if (query.q !== undefined) search.set('q', query.q);
  if (query.sort !== undefined) search.set('sort', query.sort);
  const text = search.toString();
  return `${base}/plants${text === '' ? '' : `?${text}`}`;
}

/** The next page of the answer to `fetched`, or a PlantStoreError when its link leads elsewhere or back. */
function nextPage(transport: Transport, response: Response, fetched: URL): { next?: string; nextAfter?: bigint } {
  const target = nextTarget(response.headers.get('Link'));
  if (target === undefined) return {};
  // The Link target is path-absolute (under the proxy's prefix when the service is told it): read against baseUrl.
  let next: URL | undefined;
  try {
    next = new URL(target, transport.base);
  } catch {
    // Not a URL: refused below like any link the client will not follow.
  }
  // The token goes to baseUrl's origin only, so a page elsewhere (http://other/…, //other/…) is not fetched.
  if (next?.origin !== transport.origin) throw protocolError(response, `the next page's link leads to another origin, ${next?.origin ?? target}; the client sends its token to ${transport.origin} only`);
  const back = protocolError(response, `the next page's link does not advance: ${next.href}`);
  // An opaque cursor cannot be ordered; one that repeats the page's own would fetch it again forever.
  const cursor = next.searchParams.get('cursor');
  if (cursor !== null) {
    if (cursor === '' || cursor === fetched.searchParams.get('cursor')) throw back;
    return { next: next.href };
  }
  // An after that does not pass this page's would fetch the same pages forever (-id pages go down).
  const nextAfter = toInt64(next.searchParams.get('after') ?? '');
  const after = toInt64(fetched.searchParams.get('after') ?? '');
  const down = next.searchParams.get('sort') === '-id';
  if (nextAfter === undefined || (after !== undefined && (down ? nextAfter >= after : nextAfter <= after))) throw back;
  return { next: next.href, nextAfter };
}

/** A count as the service writes one: plain decimal digits, a safe integer. */
function toCount(response: Response): number {
  const text = response.headers.get('X-Total-Count') ?? '';
  const total = /^(?:0|[1-9]\d{0,15})$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(total)) throw protocolError(response, `the list asked to count came with X-Total-Count ${JSON.stringify(text)}, not a count`);
  return total;
}

/** One page and its link to the next, or why that link is refused (thrown once the page's plants are handed over). */
async function fetchPage(transport: Transport, url: string, count: boolean | undefined, signal: AbortSignal | undefined): Promise<Fetched> {
  const response = await transport.send('GET', url, { signal, headers: count === true ? { Prefer: 'count=exact' } : undefined });
  const plants = parsePlants(await readText(response), response, true);
  const position = toInt64(response.headers.get('Feed-Position') ?? '');
  if (position === undefined || position < 0n) throw protocolError(response, `the list came with Feed-Position ${JSON.stringify(response.headers.get('Feed-Position'))}, not a position`);
  const page: Fetched = { plants, position };
  if (count === true) page.total = toCount(response);
  try {
    return Object.assign(page, nextPage(transport, response, new URL(url)));
  } catch (refused) {
    page.refused = refused as PlantStoreError;
    return page;
  }
}

export function listCalls(transport: Transport) {
  return {
    /** One page of a query; `next` (absent on the last page) fetches the page after it. */
    async listPlants(query: ListQuery = {}, { signal }: CallOptions = {}): Promise<Page> {
      let url = listUrl(transport.base, query);
      if (query.next !== undefined) {
        const next = new URL(query.next, transport.base);
        // The token goes to baseUrl's origin only, whatever a caller passes back.
        if (next.origin !== transport.origin) throw new TypeError(`next must be a page of ${transport.origin}; got ${next.origin}`);
        url = next.href;
      }
      const { refused, ...page } = await fetchPage(transport, url, query.count, signal);
      if (refused !== undefined) throw refused;
      return page;
    },

    /** Every plant of a query, one request per page, following the service's Link to the end. */
    async *plants(query: PlantQuery & { pageSize?: number } = {}, { signal }: CallOptions = {}): AsyncGenerator<StoredPlant, void, undefined> {
      const { pageSize, ...rest } = query;
      let current = await fetchPage(transport, listUrl(transport.base, { limit: pageSize, ...rest }), false, signal);
      for (;;) {
        yield* current.plants;
        if (current.refused !== undefined) throw current.refused;
        if (current.next === undefined) return;
        current = await fetchPage(transport, current.next, false, signal);
      }
    },
  };
}
