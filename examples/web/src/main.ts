/**
 * The Plant Store example app: plain DOM on @plant-store/client. The token lives in a variable of this module
 * only (never localStorage, sessionStorage or a cookie); ids stay bigint from the form to the table.
 */
import { createClient, newPlantId, PlantStoreError, type PlantStoreClient, type StoredPlant } from '@plant-store/client';

// Same origin as the page: nginx serves this app at / and the service at /api/ (docker/nginx.conf).
const BASE_URL = '/api';
const PAGE_SIZE = 5;

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const loginForm = byId<HTMLFormElement>('login');
const createForm = byId<HTMLFormElement>('create');
const rows = byId<HTMLTableSectionElement>('plants');
const loadMore = byId<HTMLButtonElement>('load-more');
const createMessage = byId<HTMLParagraphElement>('create-message');
const listMessage = byId<HTMLParagraphElement>('list-message');

let client: PlantStoreClient | undefined;
let nextAfter: bigint | undefined;

function say(element: HTMLElement, text: string, failed = false): void {
  element.textContent = text;
  element.classList.toggle('failed', failed);
}

function row(plant: StoredPlant): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.id = plant.id.toString();
  for (const [text, className] of [[plant.id.toString(), 'id'], [plant.name, 'name'], [plant.tag ?? '', 'tag']]) {
    const td = document.createElement('td');
    td.textContent = text ?? '';
    td.className = className ?? '';
    tr.append(td);
  }
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.textContent = 'Delete';
  remove.addEventListener('click', () => void deletePlant(plant.id, tr));
  const cell = document.createElement('td');
  cell.append(remove);
  tr.append(cell);
  return tr;
}

async function loadPage(reset: boolean): Promise<void> {
  if (client === undefined) return;
  try {
    const page = await client.listPlants({ limit: PAGE_SIZE, after: reset ? undefined : nextAfter });
    if (reset) rows.replaceChildren();
    rows.append(...page.plants.map(row));
    nextAfter = page.nextAfter;
    loadMore.hidden = nextAfter === undefined;
    say(listMessage, '');
  } catch (error) {
    say(listMessage, describe(error), true);
  }
}

async function deletePlant(id: bigint, tr: HTMLTableRowElement): Promise<void> {
  try {
    await client?.deletePlant(id);
    tr.remove();
    say(listMessage, `Deleted plant ${id}.`);
  } catch (error) {
    say(listMessage, describe(error), true);
  }
}

function describe(error: unknown): string {
  if (error instanceof PlantStoreError) return `${error.message} (error ${error.code})`;
  return `The service could not be reached: ${(error as Error).message}`;
}

function showFieldErrors(fields: readonly { field: string; message: string }[]): void {
  for (const slot of createForm.querySelectorAll<HTMLElement>('[data-error-for]')) {
    const problem = fields.find((entry) => entry.field === slot.dataset.errorFor);
    slot.textContent = problem?.message ?? '';
    createForm.querySelector(`[name="${slot.dataset.errorFor}"]`)?.setAttribute('aria-invalid', String(problem !== undefined));
  }
}

// The id field holds digits; anything else is left for the service to judge, so its field error shows.
function readId(text: string): bigint | undefined {
  return /^-?\d+$/.test(text.trim()) ? BigInt(text.trim()) : undefined;
}

loginForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = byId<HTMLInputElement>('token').value;
  client = createClient({ baseUrl: BASE_URL, token });
  loginForm.hidden = true;
  byId<HTMLElement>('app').hidden = false;
  byId<HTMLInputElement>('plant-id').value = newPlantId().toString();
  void loadPage(true);
});

byId<HTMLButtonElement>('new-id').addEventListener('click', () => {
  byId<HTMLInputElement>('plant-id').value = newPlantId().toString();
});

loadMore.addEventListener('click', () => void loadPage(false));

createForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void (async () => {
    if (client === undefined) return;
    const value = (name: string) => createForm.querySelector<HTMLInputElement>(`[name="${name}"]`)?.value ?? '';
    const id = readId(value('id'));
    const tag = value('tag');
    if (id === undefined) {
      showFieldErrors([{ field: 'id', message: 'must be an integer (digits only)' }]);
      return;
    }
    try {
      const plant = await client.createPlant({ id, name: value('name'), ...(tag === '' ? {} : { tag }) });
      showFieldErrors([]);
      say(createMessage, `Created ${plant.name} with id ${id}.`);
      byId<HTMLInputElement>('plant-id').value = newPlantId().toString();
      await loadPage(true);
    } catch (error) {
      showFieldErrors(error instanceof PlantStoreError ? (error.fields ?? []) : []);
      say(createMessage, describe(error), true);
    }
  })();
});
