import { SHARED_TENANT } from '../../src/tenant';
import type { ChangeEvent } from '../../src/plants/plant.events';
import { concerns, EventView, filterOf, LiveStreams, type FeedFilter } from '../../src/plants/plant.feed-filter';
import { searchKey } from '../../src/plants/plant.schemas';

const CONTROL = /[\u0000-\u001F\u007F]/;

const TAGS = [undefined, 'shade', 'sun'];
const NAMES = [undefined, 'Fern', 'ﬁcus', 'Big FERN', 'Palm'];
const SEARCHES = [undefined, 'fern', 'FICUS', 'g f', 'palm'];

/** Every event the three kinds can make from the names and tags above, an unknown previous name included. */
function everyEvent(): ChangeEvent[] {
  const events: ChangeEvent[] = [];
  let pos = 0n;
  const add = (event: Omit<ChangeEvent, 'pos' | 'id' | 'at' | 'tenant'>) => events.push({ ...event, tenant: SHARED_TENANT, pos: (pos += 1n), id: 7n, at: 0 });
  const present = <T extends string>(key: T, value: string | undefined) => (value === undefined ? {} : { [key]: value });
  for (const name of NAMES.slice(1)) {
    for (const tag of TAGS) {
      add({ kind: 'created', name, ...present('tag', tag) });
      for (const prevName of NAMES) for (const prevTag of TAGS) add({ kind: 'updated', name, ...present('tag', tag), ...present('prevName', prevName), ...present('prevTag', prevTag) });
    }
  }
  for (const name of NAMES) for (const tag of TAGS) add({ kind: 'deleted', ...present('name', name), ...present('tag', tag) });
  return events;
}

describe('the change feed filter', () => {
  it('when any code point that is not a control character is made a search key, then the key holds no control character (the joined keys of an edit cannot make a false match)', () => {
    const offending: number[] = [];

    for (let point = 0; point <= 0x10ffff; point += 1) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const text = String.fromCodePoint(point);
      if (!CONTROL.test(text) && CONTROL.test(searchKey(text))) offending.push(point);
    }

    expect(offending).toEqual([]);
  });

  it('when an edit is seen, then a search matches a side only as a whole: q never spans the name before and the name after', () => {
    const edit: ChangeEvent = { tenant: SHARED_TENANT, pos: 1n, kind: 'updated', id: 7n, at: 0, name: 'ab', prevName: 'xy', createdAt: '', updatedAt: '' };

    const matches = ['yab', 'xyab', 'AB', 'XY'].map((q) => concerns(filterOf(undefined, q), new EventView(edit)));

    expect(matches).toEqual([false, false, true, true]);
  });

  it('when events are offered to live streams of every filter, then each stream is visited exactly when concerns holds for it, once', () => {
    const filters: FeedFilter[] = TAGS.flatMap((tag) => SEARCHES.map((q) => filterOf(tag, q)));
    const live = new LiveStreams<{ filter: FeedFilter; live: boolean; index: number }>();
    const streams = [...filters, ...filters].map((filter, index) => ({ filter, live: false, index }));
    for (const stream of streams) live.add(stream);
    live.remove(streams[0] as (typeof streams)[number]);

    for (const event of everyEvent()) {
      const visited: number[] = [];
      live.forEach(event, (stream) => visited.push(stream.index));

      const expected = streams.slice(1).filter((stream) => concerns(stream.filter, new EventView(event)));
      expect({ event, visited: visited.sort((a, b) => a - b) }).toEqual({ event, visited: expected.map((stream) => stream.index) });
    }
  });
});
