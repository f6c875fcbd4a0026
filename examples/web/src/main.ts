/**
 * The Plant Store example app: plain DOM on @plant-store/client. The token lives in a variable of this module
 * only (never localStorage, sessionStorage or a cookie); ids stay bigint from the form to the table. The list
 * follows the change feed, so what another tab or user creates, edits or deletes shows here within a second.
 */
import { createClient, newPlantId, PlantStoreError, type PlantStoreClient, type StoredPlant } from '@plant-store/client';
import { openEditor } from './edit';
import { loadPage, removePlant, showPlant, type RowActions } from './list';
import { byId, describe, say, showFieldErrors } from './ui';

// Same origin as the page: nginx serves this app at / and the service at /api/ (docker/nginx.conf).
const BASE_URL = '/api';

const loginForm = byId<HTMLFormElement>('login');
const createForm = byId<HTMLFormElement>('create');
const createMessage = byId<HTMLParagraphElement>('create-message');
const listMessage = byId<HTMLParagraphElement>('list-message');
const liveStatus = byId<HTMLParagraphElement>('live-status');

let client: PlantStoreClient | undefined;

const actions: RowActions = {
  edit: (id) => {
    if (client !== undefined) void openEditor(client, id, edited);
  },
  remove: (id) => void deletePlant(id),
};

function edited(plant: StoredPlant): void {
  showPlant(plant, actions);
  say(listMessage, `Saved plant ${plant.id}.`);
}

async function deletePlant(id: bigint): Promise<void> {
  try {
    await client?.deletePlant(id);
    removePlant(id);
    say(listMessage, `Deleted plant ${id}.`);
  } catch (error) {
    say(listMessage, describe(error), true);
  }
}

/**
 * The change feed, from login until the page closes. The first page loads once the stream is open, so a change
 * committed meanwhile comes on the stream and none falls between; a reset (the feed lost track) reloads it.
 */
async function follow(using: PlantStoreClient): Promise<void> {
  let loaded = false;
  try {
    for await (const change of using.changes()) {
      if (change.type === 'open') {
        say(liveStatus, 'Live: changes made elsewhere show here.');
        if (!loaded) await loadPage(using, actions, true);
        loaded = true;
      } else if (change.type === 'reset') await loadPage(using, actions, true);
      else if (change.type === 'plant.deleted') removePlant(change.id);
      else showPlant(change.plant, actions);
    }
  } catch (error) {
    say(liveStatus, `Live updates stopped: ${describe(error)}`, true);
    if (!loaded) await loadPage(using, actions, true);
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
  void follow(client);
});

byId<HTMLButtonElement>('new-id').addEventListener('click', () => {
  byId<HTMLInputElement>('plant-id').value = newPlantId().toString();
});

byId<HTMLButtonElement>('load-more').addEventListener('click', () => {
  if (client !== undefined) void loadPage(client, actions, false);
});

createForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void (async () => {
    if (client === undefined) return;
    const value = (name: string) => createForm.querySelector<HTMLInputElement>(`[name="${name}"]`)?.value ?? '';
    const id = readId(value('id'));
    const tag = value('tag');
    if (id === undefined) {
      showFieldErrors(createForm, [{ field: 'id', message: 'must be an integer (digits only)' }]);
      return;
    }
    try {
      const plant = await client.createPlant({ id, name: value('name'), ...(tag === '' ? {} : { tag }) });
      showFieldErrors(createForm, []);
      byId<HTMLInputElement>('plant-id').value = newPlantId().toString();
      // Back to the first page, where the new plant is shown in id order (the feed brings it to other tabs).
      await loadPage(client, actions, true);
      say(createMessage, `Created ${plant.name} with id ${id}.`);
    } catch (error) {
      showFieldErrors(createForm, error instanceof PlantStoreError ? (error.fields ?? []) : []);
      say(createMessage, describe(error), true);
    }
  })();
});
