/**
 * Entity tags of one plant (RFC 9110 8.8.3 and 13.1): the ETag is the plant's version, the position of its last
 * change in the feed, as a strong tag `"<digits>"`. Versions only grow and a recreated plant gets a new one, so
 * a tag never names two different states of a plant.
 */
import type { Expected } from './plant.repository';

export const etagOf = (version: bigint): string => `"${version}"`;

const STRONG = /^"(0|[1-9][0-9]{0,18})"$/;

/** The entity tags of a header field's list, trimmed; absent or empty: none. */
const tagsOf = (header: string | undefined): string[] =>
  header === undefined ? [] : header.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');

/**
 * If-Match as the versions a change may apply to: undefined when absent, empty or `*` (any current plant, and a missing
 * one is a 404 anyway). Strong comparison: a weak tag (W/"…") or one this service never makes matches nothing,
 * so a list of only those is an empty list and the change answers 412.
 */
export function expectedVersions(header: string | undefined): Expected | undefined {
  const tags = tagsOf(header);
  if (tags.length === 0 || tags.includes('*')) return undefined;
  const versions: bigint[] = [];
  for (const tag of tags) {
    const match = STRONG.exec(tag);
    if (match !== null) versions.push(BigInt(match[1] as string));
  }
  return versions;
}

/** If-None-Match on a read: true when it names the current tag (weak comparison) or is `*`. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  return tagsOf(header).some((tag) => tag === '*' || tag === etag || tag === `W/${etag}`);
}
