/**
 * A plant as one version, its ETag kept off its members. A module of its own, so an entry that needs only this
 * (the TanStack layer) bundles nothing else of ./wire.ts.
 */

/** A plant as one version: `etag` is that version's strong entity tag ("42"), kept off the enumerable members. */
export type Versioned<T> = T & { readonly etag?: string };

/** `etag` as a non-enumerable member: equality, keys, JSON and spreads see the plant only. */
export function withEtag<T extends object>(value: T, etag: string | null | undefined): Versioned<T> {
  return etag == null ? value : Object.defineProperty(value, 'etag', { value: etag });
}
