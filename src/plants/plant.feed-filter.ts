/**
 * Which changes a filtered change stream carries (?tag=, ?q=), decided by one function, `concerns`, for live
 * delivery and for a stream's own catch-up alike; and the live streams indexed by tenant, then by their filter, so
 * that an event costs one map lookup for the streams of other tenants (never a visit), a map lookup for those of
 * other tags and one substring test per distinct search. Pure: no I/O.
 */
import type { TenantKey } from '../tenant';
import type { ChangeEvent } from './plant.events';
import { searchKey } from './plant.schemas';

/** A stream's filter: `q` as its search key (searchKey), so each event's names are compared without case. */
export type FeedFilter = { readonly tag?: string; readonly q?: string };

export const filterOf = (tag: string | undefined, q: string | undefined): FeedFilter => ({
  ...(tag === undefined ? {} : { tag }),
  ...(q === undefined ? {} : { q: searchKey(q) }),
});

// Joins the names' keys of an event's two sides for one substring test: no search key holds a control character
// (the rules of q refuse them, and NFKC with toLowerCase maps no other character to one), so a q found in the
// joined text lies wholly within one side's key.
const JOIN = '\n';

/**
 * One event as the filters read it: the plant before the change (none for a create; for an edit the name and tag
 * it replaced; for a delete the plant deleted) and after it (none for a delete). The names' search keys are
 * computed on first use and kept, so an event's keys cost the same for one search stream or a thousand.
 */
export class EventView {
  readonly hadBefore: boolean;
  readonly beforeTag: string | undefined;
  /** Undefined for an event written before the previous names were kept (migrations 008/009): unknown. */
  readonly beforeName: string | undefined;
  readonly hasAfter: boolean;
  readonly afterTag: string | undefined;
  readonly afterName: string | undefined;
  private beforeKey: string | undefined;
  private afterKey: string | undefined;
  private bothKeys: string | undefined;

  constructor(event: ChangeEvent) {
    this.hadBefore = event.kind !== 'created';
    this.hasAfter = event.kind !== 'deleted';
    const edit = event.kind === 'updated';
    this.beforeTag = edit ? event.prevTag : event.tag;
    this.beforeName = edit ? event.prevName : event.name;
    this.afterTag = event.tag;
    this.afterName = event.name;
  }

  /** The text a search looks in: the key of the side (or sides) whose tag the filter accepts. */
  keys(before: boolean, after: boolean): string {
    if (!after) return this.keyBefore();
    if (!before || this.beforeName === this.afterName) return this.keyAfter();
    this.bothKeys ??= `${this.keyBefore()}${JOIN}${this.keyAfter()}`;
    return this.bothKeys;
  }

  private keyBefore(): string {
    if (this.beforeName === this.afterName) return this.keyAfter();
    this.beforeKey ??= searchKey(this.beforeName as string);
    return this.beforeKey;
  }

  private keyAfter(): string {
    this.afterKey ??= searchKey(this.afterName as string);
    return this.afterKey;
  }
}

/**
 * The feed's one rule: a stream carries a change of a plant that matched its filter before the change or matches
 * it after, where matching means every filter given holds on that side (the tag equal, the name's key containing
 * q's). So a plant renamed or retagged out of the filter comes once, with its new state, and one that never
 * matched never comes. A side whose name the event lacks (written before migrations 008/009) counts as matching
 * the search: the stream over-delivers rather than loses a change.
 */
export function concerns(filter: FeedFilter, view: EventView): boolean {
  const before = view.hadBefore && (filter.tag === undefined || view.beforeTag === filter.tag);
  const after = view.hasAfter && (filter.tag === undefined || view.afterTag === filter.tag);
  if (filter.q === undefined || !(before || after)) return before || after;
  if ((before && view.beforeName === undefined) || (after && view.afterName === undefined)) return true;
  return view.keys(before, after).includes(filter.q);
}

/** A live stream as the index holds it. */
export type LiveMember = { readonly filter: FeedFilter; live: boolean };

/** The live streams of one filter: `concerns` is decided once for them all. */
type Group<T> = { filter: FeedFilter; members: Set<T> };

function offer<T>(groups: Map<string, Group<T>> | undefined, view: EventView, visit: (stream: T) => void): void {
  if (groups === undefined) return;
  for (const group of groups.values()) if (concerns(group.filter, view)) for (const stream of group.members) visit(stream);
}

/**
 * The streams past their catch-up, grouped by filter and indexed by tag: an event is offered to the groups without
 * a tag and to those of the tag it had and has, so 1,000 streams of other tags cost a map lookup per event, not
 * 1,000 comparisons, and streams sharing a search share its one substring test.
 */
export class LiveStreams<T extends LiveMember> {
  /** Groups without a tag (all changes, or a search alone), by search key ('' for none). */
  private readonly untagged = new Map<string, Group<T>>();
  /** Groups with a tag, by tag, then by search key. */
  private readonly byTag = new Map<string, Map<string, Group<T>>>();

  add(stream: T): void {
    stream.live = true;
    const groups = this.groupsOf(stream.filter, true) as Map<string, Group<T>>;
    const key = stream.filter.q ?? '';
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { filter: stream.filter, members: new Set() }));
    group.members.add(stream);
  }

  remove(stream: T): void {
    if (!stream.live) return;
    stream.live = false;
    const groups = this.groupsOf(stream.filter, false);
    const key = stream.filter.q ?? '';
    const group = groups?.get(key);
    if (groups === undefined || group === undefined) return;
    group.members.delete(stream);
    if (group.members.size > 0) return;
    groups.delete(key);
    if (groups.size === 0 && stream.filter.tag !== undefined) this.byTag.delete(stream.filter.tag);
  }

  get empty(): boolean {
    return this.untagged.size === 0 && this.byTag.size === 0;
  }

  /** Each live stream the event concerns, once; a stream may be removed while visited. */
  forEach(event: ChangeEvent, visit: (stream: T) => void): void {
    const view = new EventView(event);
    offer(this.untagged, view, visit);
    const before = view.hadBefore ? view.beforeTag : undefined;
    const after = view.hasAfter ? view.afterTag : undefined;
    if (after !== undefined) offer(this.byTag.get(after), view, visit);
    if (before !== undefined && before !== after) offer(this.byTag.get(before), view, visit);
  }

  private groupsOf(filter: FeedFilter, create: boolean): Map<string, Group<T>> | undefined {
    if (filter.tag === undefined) return this.untagged;
    let groups = this.byTag.get(filter.tag);
    if (groups === undefined && create) this.byTag.set(filter.tag, (groups = new Map<string, Group<T>>()));
    return groups;
  }
}

/** A live stream as TenantStreams holds it: the tenant it was opened in never changes. */
export type TenantMember = LiveMember & { readonly tenant: TenantKey };

/**
 * The live streams by tenant, each tenant's in its own LiveStreams: an event is offered to the streams of its own
 * tenant only, so a store of many tenants costs each event one map lookup, whatever the other tenants hold open.
 * A tenant's entry goes with its last stream, so the map holds the tenants that have a stream now.
 */
export class TenantStreams<T extends TenantMember> {
  private readonly byTenant = new Map<TenantKey, LiveStreams<T>>();

  add(stream: T): void {
    let streams = this.byTenant.get(stream.tenant);
    if (streams === undefined) this.byTenant.set(stream.tenant, (streams = new LiveStreams<T>()));
    streams.add(stream);
  }

  remove(stream: T): void {
    const streams = this.byTenant.get(stream.tenant);
    if (streams === undefined) return;
    streams.remove(stream);
    if (streams.empty) this.byTenant.delete(stream.tenant);
  }

  /** The tenants with a live stream now. */
  get tenants(): number {
    return this.byTenant.size;
  }

  /** Each live stream of the event's tenant that the event concerns, once; a stream may be removed while visited. */
  forEach(event: ChangeEvent, visit: (stream: T) => void): void {
    this.byTenant.get(event.tenant)?.forEach(event, visit);
  }
}
