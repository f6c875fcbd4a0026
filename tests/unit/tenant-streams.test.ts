import type { ChangeEvent } from '../../src/plants/plant.events';
import { filterOf, TenantStreams, type FeedFilter } from '../../src/plants/plant.feed-filter';
import type { TenantKey } from '../../src/tenant';

type Member = { tenant: TenantKey; filter: FeedFilter; live: boolean; index: number };

const created = (tenant: string, pos: bigint, tag?: string): ChangeEvent => ({
  tenant: tenant as TenantKey,
  pos,
  kind: 'created',
  id: pos,
  at: 0,
  name: 'Fern',
  ...(tag === undefined ? {} : { tag }),
});

/** A filter that counts how often the streams' index reads it: every read is a visit of its group. */
function countedFilter(filter: FeedFilter, reads: { count: number }): FeedFilter {
  return new Proxy(filter, {
    get(target, key: keyof FeedFilter) {
      reads.count += 1;
      return target[key];
    },
  });
}

const visitedBy = (live: TenantStreams<Member>, event: ChangeEvent): number[] => {
  const visited: number[] = [];
  live.forEach(event, (stream) => visited.push(stream.index));
  return visited.sort((a, b) => a - b);
};

describe('the live streams by tenant', () => {
  it('when an event of tenant B is offered, then none of tenant A\'s streams or their filters is looked at', () => {
    const live = new TenantStreams<Member>();
    const reads = { count: 0 };
    const filters = [filterOf(undefined, undefined), filterOf('shade', undefined), filterOf(undefined, 'fern'), filterOf('shade', 'fern')];
    const ofA = filters.map((filter, index) => ({ tenant: 'a' as TenantKey, filter: countedFilter(filter, reads), live: false, index }));
    for (const stream of ofA) live.add(stream);
    const ofB = { tenant: 'b' as TenantKey, filter: filterOf(undefined, undefined), live: false, index: 99 };
    live.add(ofB);
    reads.count = 0;

    const visited = visitedBy(live, created('b', 1n, 'shade'));

    expect({ visited, reads: reads.count }).toEqual({ visited: [99], reads: 0 });
    expect(visitedBy(live, created('a', 2n, 'shade'))).toEqual([0, 1, 2, 3]);
  });

  it('when many tenants hold streams of every filter, then each event visits exactly its own tenant\'s streams that it concerns', () => {
    const live = new TenantStreams<Member>();
    const filters = [filterOf(undefined, undefined), filterOf('shade', undefined), filterOf('sun', undefined), filterOf(undefined, 'palm')];
    const streams: Member[] = [];
    for (let tenant = 0; tenant < 1000; tenant += 1) {
      for (const filter of filters) streams.push({ tenant: `t${tenant}` as TenantKey, filter, live: false, index: streams.length });
    }
    for (const stream of streams) live.add(stream);

    const visits = [0, 1, 500, 999].map((tenant) => visitedBy(live, created(`t${tenant}`, 1n, 'shade')));

    expect(visits).toEqual([0, 1, 500, 999].map((tenant) => [4 * tenant, 4 * tenant + 1]));
    expect(visitedBy(live, created('nobody', 2n))).toEqual([]);
  });

  it('when a tenant\'s last stream is removed, then the tenant is gone from the index and its events visit nothing', () => {
    const live = new TenantStreams<Member>();
    const first = { tenant: 'a' as TenantKey, filter: filterOf('shade', undefined), live: false, index: 0 };
    const second = { tenant: 'a' as TenantKey, filter: filterOf(undefined, 'fern'), live: false, index: 1 };
    const other = { tenant: 'b' as TenantKey, filter: filterOf(undefined, undefined), live: false, index: 2 };
    for (const stream of [first, second, other]) live.add(stream);

    live.remove(first);
    const afterOne = { tenants: live.tenants, visited: visitedBy(live, created('a', 1n, 'shade')) };
    live.remove(second);
    live.remove(second);

    expect(afterOne).toEqual({ tenants: 2, visited: [1] });
    expect({ tenants: live.tenants, visited: visitedBy(live, created('a', 2n, 'shade')), live: [first.live, second.live] }).toEqual({ tenants: 1, visited: [], live: [false, false] });
  });
});
