/**
 * The Error body every failure answers, beside the catalogue (src/errors.ts) whose codes it carries: its zod
 * schemas, from which the OpenAPI document's Error and FieldError are generated, and the field problem codes.
 */
import { z } from 'zod';

/**
 * The code each field problem carries in the 400's `fields` (docs: the Errors section). Problems zod finds by
 * itself (a wrong type, a missing value) are classified where the input is parsed (src/http/input.ts); a
 * resource's rules name their own.
 */
export const FIELD_CODES = ['required', 'type', 'repeated', 'out_of_range', 'too_short', 'too_long', 'blank', 'invalid_characters', 'mismatch', 'unknown_value', 'malformed', 'conflict'] as const;
export type FieldCode = (typeof FIELD_CODES)[number];

export const fieldErrorSchema = z
  .strictObject({
    field: z.string().meta({ description: 'The property or parameter: id, name, tag, limit, after, q, sort or cursor; in a batch, the path of the member in the body (operations[3].name, …).' }),
    code: z.enum(FIELD_CODES).meta({ description: 'The kind of problem; the same problem always gets the same code.' }),
    message: z.string().meta({ description: 'What to fix, for a person, without the field name; may be reworded.' }),
  })
  .meta({ id: 'FieldError' });

export const errorSchema = z
  .object({
    error: z.int32().meta({ description: 'Stable code, one per cause; see the table in docs/api.md.' }),
    message: z.string().meta({ description: 'What went wrong and what to fix, for a person.' }),
    operation: z
      .int32()
      .optional()
      .meta({ description: 'Only on a failed batch of writes: the index of the operation that failed; none of the batch was applied.' }),
    fields: z
      .array(fieldErrorSchema)
      .optional()
      .meta({ description: 'Only on field and parameter validation (40006, 40012, 40040 to 40042, 40050, 40051): one entry per problem, for a form to show beside each field.' }),
  })
  .meta({ id: 'Error' });

