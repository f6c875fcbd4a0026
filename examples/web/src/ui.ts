/** Small DOM helpers the app's parts share, and the one way an error is worded for a person. */
import { PlantStoreError } from '@plant-store/client';

export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function say(element: HTMLElement, text: string, failed = false): void {
  element.textContent = text;
  element.classList.toggle('failed', failed);
}

export function describe(error: unknown): string {
  if (error instanceof PlantStoreError) return `${error.message} (error ${error.code})`;
  return `The service could not be reached: ${(error as Error).message}`;
}

/** Each field's problem beside the field (`data-error-for`), and aria-invalid on the input. */
export function showFieldErrors(form: HTMLFormElement, fields: readonly { field: string; message: string }[]): void {
  for (const slot of form.querySelectorAll<HTMLElement>('[data-error-for]')) {
    const problem = fields.find((entry) => entry.field === slot.dataset.errorFor);
    slot.textContent = problem?.message ?? '';
    form.querySelector(`[name="${slot.dataset.errorFor}"]`)?.setAttribute('aria-invalid', String(problem !== undefined));
  }
}
