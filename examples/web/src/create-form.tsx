/** A new plant: a fresh random id (editable), name and tag; the service's field problems show beside each field. */
import { useState } from 'react';
import { describe, fieldErrors } from './errors';
import { Field } from './field';
import { newPlantId, useCreatePlant } from './data';
import { Message, type Said } from './message';

// The id field holds digits; anything else is left for the service to judge, so its field error shows.
const readId = (text: string) => (/^-?\d+$/.test(text.trim()) ? BigInt(text.trim()) : undefined);

export function CreateForm() {
  const create = useCreatePlant();
  const [id, setId] = useState(() => newPlantId().toString());
  const [name, setName] = useState('');
  const [tag, setTag] = useState('');
  const [idProblem, setIdProblem] = useState<string>();
  const [said, say] = useState<Said>();
  const errors: Record<string, string | undefined> = { ...fieldErrors(create.error), ...(idProblem === undefined ? {} : { id: idProblem }) };

  function submit() {
    const exact = readId(id);
    setIdProblem(exact === undefined ? 'must be an integer (digits only)' : undefined);
    if (exact === undefined) return;
    const plant = { id: exact, name, ...(tag === '' ? {} : { tag }) };
    create.mutate(plant, {
      onSuccess: () => {
        say({ text: `Created ${plant.name} with id ${plant.id}.` });
        setId(newPlantId().toString());
        setName('');
        setTag('');
      },
      onError: (error) => say({ text: describe(error), failed: true }),
    });
  }

  return (
    <form
      id="create"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <h2>New plant</h2>
      <Field id="plant-id" name="id" label="Id" value={id} onChange={setId} error={errors.id} inputMode="numeric">
        <button type="button" id="new-id" onClick={() => setId(newPlantId().toString())}>
          New id
        </button>
      </Field>
      <Field id="plant-name" name="name" label="Name" value={name} onChange={setName} error={errors.name} />
      <Field id="plant-tag" name="tag" label="Tag" value={tag} onChange={setTag} error={errors.tag} />
      <button type="submit" disabled={create.isPending}>
        Create
      </button>
      <Message id="create-message" role="status" said={said} />
    </form>
  );
}
