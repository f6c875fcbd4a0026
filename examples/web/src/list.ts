/**
 * The plants table: pages in ascending id with "load more", and rows put in place or taken out as changes
 * arrive. A change is shown only inside the loaded range (ids up to the last one loaded), so "load more" never
 * lists a plant twice; past it, the next page brings the plant as it is then.
 */
import type { PlantStoreClient, StoredPlant } from '@plant-store/client';
import { byId, describe, say } from './ui';

const PAGE_SIZE = 5;

const rows = byId<HTMLTableSectionElement>('plants');
const loadMore = byId<HTMLButtonElement>('load-more');
const listMessage = byId<HTMLParagraphElement>('list-message');

export type RowActions = { edit: (id: bigint) => void; remove: (id: bigint) => void };

let nextAfter: bigint | undefined;
let loaded = false;

function row(plant: StoredPlant, actions: RowActions): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.id = plant.id.toString();
  for (const [text, className] of [[plant.id.toString(), 'id'], [plant.name, 'name'], [plant.tag ?? '', 'tag']]) {
    const td = document.createElement('td');
    td.textContent = text ?? '';
    td.className = className ?? '';
    tr.append(td);
  }
  const cell = document.createElement('td');
  for (const [label, action] of [['Edit', actions.edit], ['Delete', actions.remove]] as const) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = label;
    button.className = label.toLowerCase();
    button.addEventListener('click', () => action(plant.id));
    cell.append(button);
  }
  tr.append(cell);
  return tr;
}

const rowOf = (id: bigint) => rows.querySelector<HTMLTableRowElement>(`tr[data-id="${id}"]`);

export async function loadPage(client: PlantStoreClient, actions: RowActions, reset: boolean): Promise<void> {
  try {
    const page = await client.listPlants({ limit: PAGE_SIZE, after: reset ? undefined : nextAfter });
    if (reset) rows.replaceChildren();
    rows.append(...page.plants.map((plant) => row(plant, actions)));
    nextAfter = page.nextAfter;
    loaded = true;
    loadMore.hidden = nextAfter === undefined;
    say(listMessage, '');
  } catch (error) {
    say(listMessage, describe(error), true);
  }
}

/** A plant created or edited elsewhere (or here): its row replaced, or added in id order when in range. */
export function showPlant(plant: StoredPlant, actions: RowActions): void {
  const current = rowOf(plant.id);
  if (current !== null) {
    current.replaceWith(row(plant, actions));
    return;
  }
  if (!loaded || (nextAfter !== undefined && plant.id > nextAfter)) return;
  const after = [...rows.rows].find((tr) => BigInt(tr.dataset.id ?? '0') > plant.id);
  rows.insertBefore(row(plant, actions), after ?? null);
}

export function removePlant(id: bigint): void {
  rowOf(id)?.remove();
}
