/**
 * "Delete selected" and "Retag selected": every selected plant in one all-or-nothing batch, each operation with
 * If-Match on the version read when it was selected. A failed batch names the plant it stopped at and why, says
 * that nothing was changed, and takes that plant out of the selection; a batch that succeeds clears it.
 */
import { useState } from 'react';
import { PlantStoreError, useBatch, type BatchOperation } from './data';
import { describe } from './errors';
import { Message, type Said } from './message';
import type { Picked, Selection } from './selection';

// Names listed in the selection line before "and N more".
const NAMES_SHOWN = 5;

const plants = (count: number) => `${count} ${count === 1 ? 'plant' : 'plants'}`;

function operationOf(action: Action, plant: Picked): BatchOperation {
  const ifMatch = plant.etag === undefined ? {} : { ifMatch: plant.etag };
  return action.kind === 'delete' ? { op: 'delete', id: plant.id, ...ifMatch } : { op: 'update', id: plant.id, patch: { tag: action.tag === '' ? null : action.tag }, ...ifMatch };
}

type Action = { kind: 'delete' } | { kind: 'retag'; tag: string };

const done = (action: Action, count: number) =>
  action.kind === 'delete' ? `Deleted ${plants(count)}.` : action.tag === '' ? `Removed the tag of ${plants(count)}.` : `Tagged ${plants(count)} “${action.tag}”.`;

// Why the operation of that plant failed, as a person reads it; the service's own message follows.
const REASONS: Record<number, string> = { 404: 'it was deleted elsewhere', 412: 'it was changed elsewhere after you selected it' };

/**
 * What a failed batch did. A 4xx from the service is an answer: nothing was applied. Anything else (no answer, a
 * 5xx, an answer that is not the results) after the client's own retries with the batch's key leaves it unknown.
 */
function failure(error: unknown, sent: readonly Picked[]): { said: Said; failed?: Picked } {
  const answered = error instanceof PlantStoreError && error.code !== 0 && error.status >= 400 && error.status < 500;
  if (!answered) return { said: { text: `It is not known whether the batch was applied: ${describe(error)}. The list shows what the store holds.`, failed: true } };
  const failed = error.operation === undefined ? undefined : sent[error.operation];
  if (failed === undefined) return { said: { text: `Nothing was changed: ${describe(error)}`, failed: true } };
  const reason = REASONS[error.status];
  const message = describe(error).replace(/^operations\[\d+\]: /, '');
  const again = error.status === 412 ? ': select it again to act on it as it is now' : '';
  const text = `Nothing was changed. Plant ${failed.id} “${failed.name}” failed${reason === undefined ? '' : ` (${reason})`}: ${message} It is no longer selected${again}.`;
  return { said: { text, failed: true }, failed };
}

type BatchActionsProps = { selection: Selection; onDeleted: (ids: readonly bigint[]) => void };

export function BatchActions({ selection, onDeleted }: BatchActionsProps) {
  const batch = useBatch();
  const [tag, setTag] = useState('');
  const [said, say] = useState<Said>();
  const { picked } = selection;
  const ready = picked.length > 0 && picked.every((plant) => !plant.reading) && !batch.isPending;
  const names = picked.slice(0, NAMES_SHOWN).map((plant) => plant.name);
  const more = picked.length > NAMES_SHOWN ? ` and ${picked.length - NAMES_SHOWN} more` : '';

  function run(action: Action) {
    const sent = picked;
    say(undefined);
    batch.mutate(
      sent.map((plant) => operationOf(action, plant)),
      {
        onSuccess: () => {
          selection.clear();
          if (action.kind === 'delete') onDeleted(sent.map((plant) => plant.id));
          say({ text: done(action, sent.length) });
        },
        onError: (error) => {
          const { said: failed, failed: plant } = failure(error, sent);
          if (plant !== undefined) selection.unpick([plant.id]);
          say(failed);
        },
      },
    );
  }

  return (
    <form
      id="batch"
      aria-label="Selected plants"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        run({ kind: 'retag', tag });
      }}
    >
      <p id="selection" role="status">
        {picked.length === 0 ? 'No plants selected.' : `Selected (${picked.length}): ${names.join(', ')}${more}.`}
      </p>
      <button type="button" id="batch-delete" disabled={!ready} onClick={() => run({ kind: 'delete' })}>
        Delete selected
      </button>
      <label>
        New tag <input id="batch-tag" name="tag" placeholder="empty: no tag" value={tag} onChange={(event) => setTag(event.target.value)} />
      </label>
      <button type="submit" id="batch-retag" disabled={!ready}>
        Retag selected
      </button>
      <button type="button" id="batch-clear" disabled={picked.length === 0} onClick={selection.clear}>
        Clear selection
      </button>
      <Message id="batch-message" role="alert" said={said} />
      <Message id="selection-message" role="alert" said={selection.problem === undefined ? undefined : { text: selection.problem, failed: true }} />
    </form>
  );
}
