/** The one way an error is worded for a person, and a 400's field problems keyed by field. */
import { PlantStoreError } from './data';

export function describe(error: unknown): string {
  if (error instanceof PlantStoreError) return `${error.message} (error ${error.code})`;
  return `The service could not be reached: ${(error as Error).message}`;
}

/** The service's 400 `fields` ({ field, code, message }): each message goes beside its field. */
export function fieldErrors(error: unknown): Record<string, string | undefined> {
  if (!(error instanceof PlantStoreError)) return {};
  return Object.fromEntries((error.fields ?? []).map((problem) => [problem.field, problem.message]));
}
