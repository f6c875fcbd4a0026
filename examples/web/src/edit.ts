/**
 * Editing one plant (rename, retag): the form opens on the plant as read now, with its ETag, and a save sends
 * that ETag in If-Match. A plant changed since, in another tab or by another user, answers 412 and nothing is
 * saved: the form says so, shows what is stored now, and keeps what the user typed until they load that version.
 */
import { PlantStoreError, type PlantStoreClient, type StoredPlant, type Versioned } from '@plant-store/client';
import { byId, describe, say, showFieldErrors } from './ui';

const editor = byId<HTMLElement>('editor');
const form = byId<HTMLFormElement>('edit');
const message = byId<HTMLParagraphElement>('edit-message');
const reload = byId<HTMLButtonElement>('edit-reload');
const nameInput = byId<HTMLInputElement>('edit-name');
const tagInput = byId<HTMLInputElement>('edit-tag');

let client: PlantStoreClient | undefined;
let editing: Versioned<StoredPlant> | undefined;
let saved: (plant: StoredPlant) => void = () => undefined;

function fill(plant: Versioned<StoredPlant>): void {
  editing = plant;
  byId<HTMLElement>('edit-id').textContent = plant.id.toString();
  nameInput.value = plant.name;
  tagInput.value = plant.tag ?? '';
  showFieldErrors(form, []);
  reload.hidden = true;
}

const shown = (plant: StoredPlant) => `“${plant.name}”${plant.tag === undefined ? ' without a tag' : ` tagged ${plant.tag}`}`;

/** Opens the editor on plant `id` as stored now; `onSaved` gets the plant after a save. */
export async function openEditor(using: PlantStoreClient, id: bigint, onSaved: (plant: StoredPlant) => void): Promise<void> {
  client = using;
  saved = onSaved;
  editor.hidden = false;
  try {
    fill(await using.getPlant(id));
    say(message, '');
    nameInput.focus();
  } catch (error) {
    editing = undefined;
    say(message, describe(error), true);
  }
}

async function save(): Promise<void> {
  if (client === undefined || editing === undefined) return;
  const plant = editing;
  const tag = tagInput.value;
  try {
    const stored = await client.updatePlant(plant.id, { name: nameInput.value, tag: tag === '' ? null : tag }, { ifMatch: plant.etag });
    editing = stored;
    showFieldErrors(form, []);
    editor.hidden = true;
    saved(stored);
  } catch (error) {
    if (!(error instanceof PlantStoreError)) {
      say(message, describe(error), true);
      return;
    }
    showFieldErrors(form, error.fields ?? []);
    if (error.status === 404) say(message, `Not saved: plant ${plant.id} was deleted elsewhere.`, true);
    else if (error.status === 412) await conflict(plant.id);
    else say(message, describe(error), true);
  }
}

/** The 412: what is stored now, read again, and the choice to edit that version; nothing typed is lost. */
async function conflict(id: bigint): Promise<void> {
  try {
    const current = await (client as PlantStoreClient).getPlant(id);
    say(message, `Not saved: someone changed this plant after you opened it. It is now ${shown(current)}. Load that version to edit it again.`, true);
    reload.hidden = false;
  } catch (error) {
    say(message, `Not saved: someone changed this plant after you opened it, and it cannot be read now: ${describe(error)}`, true);
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void save();
});

reload.addEventListener('click', () => {
  if (client !== undefined && editing !== undefined) void openEditor(client, editing.id, saved);
});

byId<HTMLButtonElement>('edit-cancel').addEventListener('click', () => {
  editor.hidden = true;
  editing = undefined;
});
