/** Reading the client's change feed in a test: in the background, every event kept, waited for by condition. */
import type { ChangeEvent, ChangesQuery, PlantStoreClient } from '../../clients/typescript/src/index';
import { sleep } from './common';

/** Reads client.changes(query) in the background, keeping every event, until it ends. */
export function follow(client: PlantStoreClient, query: ChangesQuery) {
  const events: ChangeEvent[] = [];
  const state: { ended: boolean; failed?: unknown } = { ended: false };
  const done = (async () => {
    try {
      for await (const event of client.changes(query)) events.push(event);
    } catch (error) {
      state.failed = error;
    } finally {
      state.ended = true;
    }
  })();
  const until = async (met: (seen: ChangeEvent[]) => boolean, timeoutMs = 5000): Promise<void> => {
    const start = Date.now();
    while (!met(events)) {
      if (Date.now() - start > timeoutMs || state.ended) throw new Error(`not met after ${Date.now() - start} ms; ended ${state.ended}; events ${JSON.stringify(events, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value))}`);
      await sleep(10);
    }
  };
  return { events, state, done, until };
}

export const count = (type: ChangeEvent['type']) => (seen: ChangeEvent[]) => seen.filter((event) => event.type === type).length;
export const plantEvents = (seen: ChangeEvent[]) => seen.filter((event) => event.type.startsWith('plant.'));
export const positionOf = (event: ChangeEvent | undefined): bigint => (event !== undefined && 'position' in event && event.position !== undefined ? event.position : -1n);
