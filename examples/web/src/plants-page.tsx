/**
 * The store once signed in: a new-plant form, the editor, and the list with its search box, sort choice, count,
 * a checkbox per row for the batch actions, and "load more". The list is TanStack Query's cache for that search and order, which the live feed keeps
 * current, so a plant created, renamed or deleted in another tab enters, moves or leaves it where it belongs.
 */
import { useEffect, useState } from 'react';
import { BatchActions } from './batch-actions';
import { CreateForm } from './create-form';
import { SORTS, useDeletePlant, useLiveChanges, usePlantList, type PlantQuery, type Sort, type StoredPlant } from './data';
import { EditForm } from './edit-form';
import { describe } from './errors';
import { Message, type Said } from './message';
import { useSelection, type Selection } from './selection';

// Typing settles this long before the list is asked for: one request per pause, not per key.
const SEARCH_DELAY_MS = 250;

function useSettled(value: string): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [value]);
  return settled;
}

const counted = (total: number) => `${total.toLocaleString('en-US')} ${total === 1 ? 'plant' : 'plants'}`;

export function PlantsPage() {
  const live = useLiveChanges();
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<Sort>(SORTS[0][0]);
  const q = useSettled(search).trim();
  const query: PlantQuery = q === '' ? { sort } : { q, sort };
  const [editing, setEditing] = useState<bigint>();
  const [said, say] = useState<Said>();
  const remove = useDeletePlant();
  const selection = useSelection();

  function deletePlant(id: bigint) {
    remove.mutate({ id }, {
      onSuccess: () => {
        if (editing === id) setEditing(undefined);
        selection.unpick([id]);
        say({ text: `Deleted plant ${id}.` });
      },
      onError: (error) => say({ text: describe(error), failed: true }),
    });
  }

  return (
    <section id="app">
      <CreateForm />
      {editing !== undefined && (
        <EditForm
          key={editing.toString()}
          id={editing}
          onClose={() => setEditing(undefined)}
          onSaved={(plant) => {
            setEditing(undefined);
            selection.reread(plant);
            say({ text: `Saved plant ${plant.id}.` });
          }}
        />
      )}
      <h2>Plants</h2>
      <p id="live-status" role="status" className={live.state === 'stopped' ? 'hint failed' : 'hint'}>
        {live.state === 'stopped' ? `Live updates stopped: ${describe(live.error)}` : 'Live: changes made elsewhere show here.'}
      </p>
      <div className="toolbar">
        <label>
          Search <input id="search" type="search" placeholder="part of a name" maxLength={100} value={search} onChange={(event) => setSearch(event.target.value)} />
        </label>
        <label>
          Order{' '}
          <select id="sort" value={sort} onChange={(event) => setSort(event.target.value as Sort)}>
            {SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <BatchActions selection={selection} onDeleted={(ids) => editing !== undefined && ids.includes(editing) && setEditing(undefined)} />
      <PlantList query={query} selection={selection} onEdit={setEditing} onDelete={deletePlant} />
      <Message id="list-message" role="status" said={said} />
    </section>
  );
}

type PlantListProps = { query: PlantQuery; selection: Selection; onEdit: (id: bigint) => void; onDelete: (id: bigint) => void };

function PlantList({ query, selection, onEdit, onDelete }: PlantListProps) {
  const list = usePlantList(query);
  const allShown = list.plants.length > 0 && list.plants.every((plant) => selection.has(plant.id));
  return (
    <>
      <p id="count" role="status">
        {list.total === undefined ? '' : counted(list.total)}
      </p>
      <table>
        <thead>
          <tr>
            <th>
              <input
                type="checkbox"
                id="select-all"
                aria-label="Select every plant shown"
                checked={allShown}
                disabled={list.plants.length === 0}
                onChange={() => (allShown ? selection.unpick(list.plants.map((plant) => plant.id)) : selection.pick(list.plants))}
              />
            </th>
            <th>Id</th>
            <th>Name</th>
            <th>Tag</th>
            <th>Changed</th>
            <th></th>
          </tr>
        </thead>
        <tbody id="plants">
          {list.plants.map((plant) => (
            <PlantRow key={plant.id.toString()} plant={plant} selection={selection} onEdit={onEdit} onDelete={onDelete} />
          ))}
        </tbody>
      </table>
      {list.pending && <p className="hint">Reading plants…</p>}
      {!list.pending && list.plants.length === 0 && list.error === null && <p className="hint">{query.q === undefined ? 'No plants yet.' : `No plant's name contains “${query.q}”.`}</p>}
      {list.error !== null && (
        <p id="list-error" className="failed" role="alert">
          {describe(list.error)}
        </p>
      )}
      <button type="button" id="load-more" hidden={!list.hasMore} disabled={list.loadingMore} onClick={list.loadMore}>
        Load more
      </button>
    </>
  );
}

type PlantRowProps = { plant: StoredPlant; selection: Selection; onEdit: (id: bigint) => void; onDelete: (id: bigint) => void };

function PlantRow({ plant, selection, onEdit, onDelete }: PlantRowProps) {
  const selected = selection.has(plant.id);
  return (
    <tr data-id={plant.id.toString()}>
      <td>
        <input
          type="checkbox"
          className="select"
          aria-label={`Select ${plant.name}`}
          checked={selected}
          onChange={() => (selected ? selection.unpick([plant.id]) : selection.pick([plant]))}
        />
      </td>
      <td className="id">{plant.id.toString()}</td>
      <td className="name">{plant.name}</td>
      <td className="tag">{plant.tag ?? ''}</td>
      <td className="changed">
        <time dateTime={plant.updatedAt}>{new Date(plant.updatedAt).toLocaleString()}</time>
      </td>
      <td>
        <button type="button" className="edit" onClick={() => onEdit(plant.id)}>
          Edit
        </button>
        <button type="button" className="delete" onClick={() => onDelete(plant.id)}>
          Delete
        </button>
      </td>
    </tr>
  );
}
