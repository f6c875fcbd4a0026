/**
 * What tests of GET /plants's queries share: the contract's order written out independently of src (search key,
 * code point comparison, each sort), and a walk that follows the next Link to the end.
 */
import type { Response } from 'supertest';
import { bearer, type TestApp } from './test-app';

export type Listed = { id: number; name: string; tag?: string; createdAt: string; updatedAt: string };

export const SORTS = ['id', '-id', 'name', '-name', 'createdAt', '-createdAt', 'updatedAt', '-updatedAt'] as const;
export type SortName = (typeof SORTS)[number];

/** The contract's key: NFKC, then the default lower-casing. */
export const keyOf = (text: string): string => text.normalize('NFKC').toLowerCase();

/** By code point: UTF-8 byte order is code point order (JavaScript's < compares UTF-16 units, which differs). */
export const byCodePoint = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

const byNumber = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** Compares two plants as `sort` orders them (ascending form), ties as the contract breaks them. */
function ascending(sort: string, a: Listed, b: Listed): number {
  if (sort === 'name') return byCodePoint(keyOf(a.name), keyOf(b.name)) || byCodePoint(a.name, b.name) || byNumber(a.id, b.id);
  if (sort === 'createdAt') return byCodePoint(a.createdAt, b.createdAt) || byNumber(a.id, b.id);
  if (sort === 'updatedAt') return byCodePoint(a.updatedAt, b.updatedAt) || byNumber(a.id, b.id);
  return byNumber(a.id, b.id);
}

/** The plants in `sort`'s order, as the contract defines it. */
export function inOrder(plants: readonly Listed[], sort: SortName): Listed[] {
  const descending = sort.startsWith('-');
  const member = descending ? sort.slice(1) : sort;
  return [...plants].sort((a, b) => (descending ? -1 : 1) * ascending(member, a, b));
}

/** The target of a next Link, or undefined. */
export const nextOf = (response: Response): string | undefined => /^<([^>]+)>; rel="next"$/.exec(response.headers.link ?? '')?.[1];

/** Every page from `path` on, following each next Link; `between` runs after each page (another client's writes). */
export async function walk(app: TestApp, path: string, between: () => Promise<void> = () => Promise.resolve()): Promise<{ plants: Listed[]; pages: number }> {
  const plants: Listed[] = [];
  let pages = 0;
  for (let next: string | undefined = path; next !== undefined; ) {
    const response: Response = await app.request.get(next).set(bearer());
    if (response.status !== 200) throw new Error(`GET ${next}: ${response.status} ${response.text}`);
    plants.push(...(response.body as Listed[]));
    pages += 1;
    next = nextOf(response);
    await between();
  }
  return { plants, pages };
}
