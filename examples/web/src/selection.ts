/**
 * The plants picked for a batch action, each as the version read when its box was ticked (its name and ETag), so a
 * batch sent with those ETags in If-Match fails when someone changed or deleted one of them since. A picked plant
 * stays picked when its row leaves the list (deleted elsewhere, searched away): the batch then names it.
 */
import { useState } from 'react';
import { useReadPlant, type StoredPlant } from './data';
import { describe } from './errors';

/** `reading` until its version is read; `etag` is that version's. */
export type Picked = { id: bigint; name: string; etag?: string; reading: boolean };

export type Selection = {
  picked: Picked[];
  has: (id: bigint) => boolean;
  pick: (plants: readonly StoredPlant[]) => void;
  unpick: (ids: readonly bigint[]) => void;
  /** A selected plant this tab has just changed: its new version is read, as the one the user now sees. */
  reread: (plant: StoredPlant) => void;
  clear: () => void;
  /** A plant that could not be picked (its read failed), said until the next pick. */
  problem: string | undefined;
};

type Picks = ReadonlyMap<string, Picked>;

const without = (picks: Picks, ids: readonly bigint[]): Picks => {
  const next = new Map(picks);
  for (const id of ids) next.delete(id.toString());
  return next;
};

export function useSelection(): Selection {
  const read = useReadPlant();
  const [picks, setPicks] = useState<Picks>(new Map());
  const [problem, setProblem] = useState<string>();

  async function readVersion({ id, name }: StoredPlant) {
    const key = id.toString();
    try {
      const version = await read(id);
      // Unticked while it was read: stays unticked.
      setPicks((now) => (now.get(key)?.reading === true ? new Map(now).set(key, { id, name: version.name, etag: version.etag, reading: false }) : now));
    } catch (error) {
      setPicks((now) => without(now, [id]));
      setProblem(`Could not select plant ${key} “${name}”: ${describe(error)}`);
    }
  }

  return {
    picked: [...picks.values()],
    has: (id) => picks.has(id.toString()),
    pick: (plants) => {
      setProblem(undefined);
      const fresh = plants.filter((plant) => !picks.has(plant.id.toString()));
      setPicks((now) => new Map([...now, ...fresh.map((plant): [string, Picked] => [plant.id.toString(), { id: plant.id, name: plant.name, reading: true }])]));
      for (const plant of fresh) void readVersion(plant);
    },
    unpick: (ids) => setPicks((now) => without(now, ids)),
    reread: (plant) => {
      const key = plant.id.toString();
      if (!picks.has(key)) return;
      setPicks((now) => (now.has(key) ? new Map(now).set(key, { id: plant.id, name: plant.name, reading: true }) : now));
      void readVersion(plant);
    },
    clear: () => setPicks(new Map()),
    problem,
  };
}
