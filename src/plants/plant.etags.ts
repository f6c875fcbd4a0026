/**
 * Entity tags of one plant (RFC 9110 8.8.3 and 13.1): the ETag is the plant's version, the position of its last
 * change in the feed, as a strong tag `"<digits>"`. Versions only grow and a recreated plant gets a new one, so
 * a tag never names two different states of a plant.
 */
import type { Expected } from './plant.repository';
import type { PutExpected } from './plant.write-rule';

/**
 * How a version is written into an answer: its digits, or (a keyed commit on PostgreSQL,
 * plant.idempotency-keys.postgres.ts) a placeholder that the commit's statement replaces with the position it takes.
 */
export type VersionText = (version: bigint) => string;

export const versionDigits: VersionText = (version) => String(version);

export const etagOf = (version: bigint, text: VersionText = versionDigits): string => `"${text(version)}"`;

/** The ETag as a JSON string: what JSON.stringify(etagOf(version)) writes, the placeholder left as it is. */
export const etagJson = (version: bigint, text: VersionText = versionDigits): string => `"\\"${text(version)}\\""`;

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

/**
 * A put's preconditions: If-None-Match: * (create only) or If-Match (`*`: any plant, so none is a 412; tags: one
 * of those versions). Both at once can never hold (an absent plant fails If-Match, a present one If-None-Match):
 * an empty list, so the put answers 412 either way.
 */
export function putExpected(ifMatch: string | undefined, createOnly: boolean): PutExpected | undefined {
  const tags = tagsOf(ifMatch);
  if (createOnly) return tags.length === 0 ? 'absent' : [];
  return tags.includes('*') ? 'exists' : expectedVersions(ifMatch);
}

/** Whether If-None-Match is `*` alone; absent or empty: undefined, so a caller can tell the two from other lists. */
export function noneMatchAny(header: string | undefined): boolean | undefined {
  const tags = tagsOf(header);
  return tags.length === 0 ? undefined : tags.length === 1 && tags[0] === '*';
}

/** If-None-Match on a read: true when it names the current tag (weak comparison) or is `*`. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  return tagsOf(header).some((tag) => tag === '*' || tag === etag || tag === `W/${etag}`);
}
