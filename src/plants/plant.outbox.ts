/**
 * A plant change's webhook events, as the outbox port (src/change-outbox.ts) takes them: the plants folder names
 * its event types and writes their data with plant.json.ts; src/webhooks implements the port and src/store hands
 * each repository its outbox, so the repositories never load the webhook code (nor undici) themselves. Both
 * directions carry data only: no SQL text and no parameter positions cross from one folder to the other.
 */
import type { ChangeEntry } from '../change-outbox';
import type { TraceContext } from '../tracing';
import { deletedPlantJson, newPlantJson, plantJson } from './plant.json';
import type { Decision } from './plant.write-rule';

/**
 * The event a decision writes, if any (created, updated or deleted; never a replay, conflict, unchanged edit,
 * stale or missing one). plant.created's body is the NewPlant itself, as the contract fixed it (no times); an
 * edit's and a delete's is the envelope around the plant as stored after the edit (times included), `{id}` alone
 * for a delete.
 */
export function changeEntry(decision: Decision, trace: TraceContext | undefined): ChangeEntry | undefined {
  const traced = trace === undefined ? {} : { trace };
  if (decision.outcome === 'created') return { type: 'plant.created', subject: decision.put.id, data: newPlantJson(decision.put), bare: true, ...traced };
  if (decision.outcome === 'updated') return { type: 'plant.updated', subject: decision.put.id, data: plantJson(decision.put), ...traced };
  if (decision.outcome === 'deleted') return { type: 'plant.deleted', subject: decision.remove, data: deletedPlantJson(decision.remove), ...traced };
  return undefined;
}
