/**
 * Editing one plant (rename, retag): the form opens on the plant as cached, with that version's ETag, and a save
 * sends it in If-Match. A plant changed since, in another tab or by another user, answers 412 and nothing is
 * saved: the form says so, shows what is stored now (the cached plant, which the live feed and the mutation's
 * refetch keep current), and keeps what the user typed until they load that version.
 */
import { useEffect, useState } from 'react';
import { PlantStoreError, usePlant, useUpdatePlant, type PlantVersion, type StoredPlant } from './data';
import { describe, fieldErrors } from './errors';
import { Field } from './field';
import { Message, type Said } from './message';

const shown = (plant: StoredPlant) => `“${plant.name}”${plant.tag === undefined ? ' without a tag' : ` tagged ${plant.tag}`}`;

type EditFormProps = { id: bigint; onSaved: (plant: StoredPlant) => void; onClose: () => void };

export function EditForm({ id, onSaved, onClose }: EditFormProps) {
  const current = usePlant(id);
  const update = useUpdatePlant();
  const [opened, setOpened] = useState<PlantVersion>();
  const [name, setName] = useState('');
  const [tag, setTag] = useState('');
  const [conflict, setConflict] = useState(false);
  const [said, say] = useState<Said>();

  function open(version: PlantVersion) {
    setOpened(version);
    setName(version.name);
    setTag(version.tag ?? '');
    setConflict(false);
    say(undefined);
    update.reset();
  }

  useEffect(() => {
    if (opened === undefined && current.data !== undefined) open(current.data);
    // Only the first read opens the form; later versions wait for the user (the 412's "load that version").
  }, [current.data, opened]);

  function save() {
    if (opened === undefined) return;
    setConflict(false);
    say(undefined);
    update.mutate(
      { id, patch: { name, tag: tag === '' ? null : tag }, ifMatch: opened.etag },
      {
        onSuccess: (stored) => onSaved(stored),
        onError: (error) => {
          if (error instanceof PlantStoreError && error.status === 412) setConflict(true);
          else if (error instanceof PlantStoreError && error.status === 404) say({ text: `Not saved: plant ${id} was deleted elsewhere.`, failed: true });
          else say({ text: describe(error), failed: true });
        },
      },
    );
  }

  // The 412's message waits for the version stored now: the cached plant once it differs from the one opened.
  const newer = conflict && current.data !== undefined && current.data.etag !== opened?.etag ? current.data : undefined;
  const conflictSaid: Said | undefined = !conflict
    ? undefined
    : newer === undefined
      ? { text: 'Not saved: someone changed this plant after you opened it. Reading what is stored now…', failed: true }
      : { text: `Not saved: someone changed this plant after you opened it. It is now ${shown(newer)}. Load that version to edit it again.`, failed: true };
  const errors = fieldErrors(update.error);

  return (
    <section id="editor">
      <h2>
        Edit plant <span id="edit-id" className="id">{id.toString()}</span>
      </h2>
      {opened === undefined ? (
        <Message id="edit-message" role="alert" said={current.error === null ? { text: 'Reading the plant…' } : { text: describe(current.error), failed: true }} />
      ) : (
        <form
          id="edit"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <Field id="edit-name" name="name" label="Name" value={name} onChange={setName} error={errors.name} />
          <Field id="edit-tag" name="tag" label="Tag" value={tag} onChange={setTag} error={errors.tag} placeholder="empty: no tag" />
          <button type="submit" disabled={update.isPending}>
            Save
          </button>
          <button type="button" id="edit-cancel" onClick={onClose}>
            Cancel
          </button>
          <Message id="edit-message" role="alert" said={conflictSaid ?? said} />
          {newer !== undefined && (
            <button type="button" id="edit-reload" onClick={() => open(newer)}>
              Load the current version
            </button>
          )}
        </form>
      )}
    </section>
  );
}
