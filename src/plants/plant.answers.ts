/**
 * A write's 2xx answer written from its store outcome, byte for byte what the controller sends for it: what a
 * write sent with Idempotency-Key keeps, inside the write's own transaction, for its replays. Undefined for an
 * outcome that fails (its answer is an error, and nothing is kept).
 */
import { batchJson } from './plant.batch';
import { etagOf, versionDigits, type VersionText } from './plant.etags';
import { newPlantJson, plantBodyJson, plantJson } from './plant.json';
import type { BatchOutcome, RenderedAnswer, WriteOutcome } from './plant.repository';
import { failed, type PlantWrite } from './plant.write-rule';

type Outcome = WriteOutcome | BatchOutcome;
type Stored = Extract<WriteOutcome, { stored: unknown }>;

/** A single write's outcome that succeeded with a plant. */
const withPlant = (outcome: Outcome): Stored | undefined =>
  'stored' in outcome && !failed(outcome.outcome) ? outcome : undefined;

/** POST /plants: 200, its ETag and the plant as written (no id). */
export function createAnswer(outcome: Outcome, text: VersionText = versionDigits): RenderedAnswer | undefined {
  const done = withPlant(outcome);
  return done === undefined ? undefined : { status: 200, etag: etagOf(done.version, text), body: plantBodyJson(done.stored) };
}

/** PUT /plants/{id}: 201 with `location` when it created the plant, 200 otherwise; the plant with its id. */
export function putAnswer(outcome: Outcome, location: string, text: VersionText = versionDigits): RenderedAnswer | undefined {
  const done = withPlant(outcome);
  if (done === undefined) return undefined;
  const answer = { etag: etagOf(done.version, text), body: newPlantJson(done.stored) };
  return done.outcome === 'created' ? { status: 201, ...answer, location } : { status: 200, ...answer };
}

/** PATCH /plants/{id}: the plant and its ETag, or (a caller that may not read) 204 with the ETag alone. */
export function updateAnswer(outcome: Outcome, mayRead: boolean, text: VersionText = versionDigits): RenderedAnswer | undefined {
  const done = withPlant(outcome);
  if (done === undefined) return undefined;
  const etag = etagOf(done.version, text);
  return mayRead ? { status: 200, etag, body: plantJson(done.stored) } : { status: 204, etag };
}

/** DELETE /plants/{id}: 204, nothing else. */
export const deleteAnswer = (outcome: Outcome): RenderedAnswer | undefined => (outcome.outcome === 'deleted' ? { status: 204 } : undefined);

/** POST /plants/batch: 200 with every operation's result, when all applied. */
export function batchAnswer(writes: readonly PlantWrite[], outcome: Outcome, mayRead: boolean, text: VersionText = versionDigits): RenderedAnswer | undefined {
  return outcome.outcome === 'applied' && 'results' in outcome ? { status: 200, body: batchJson(writes, outcome.results, mayRead, text) } : undefined;
}
