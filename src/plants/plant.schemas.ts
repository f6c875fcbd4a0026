import { z } from 'zod';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const NAME_MAX = 200;
export const TAG_MAX = 100;

const ID_RULE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
const CONTROL = /[\u0000-\u001F\u007F]/;
// The same rules as a JSON Schema pattern (ECMA-262 syntax): one non-whitespace character, no control character.
const TEXT_PATTERN = '^(?=[\\s\\S]*\\S)[^\\u0000-\\u001F\\u007F]*$';

const required = (rule: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : rule);

// The body parser hands integers over as number (safe) or bigint (beyond 2^53); fractions stay numbers.
export const plantIdSchema = z
  .union([z.number(), z.bigint()], { error: required(ID_RULE) })
  .refine((value) => typeof value === 'bigint' || Number.isInteger(value), ID_RULE)
  .transform((value) => BigInt(value))
  .refine((value) => value >= INT64_MIN && value <= INT64_MAX, ID_RULE)
  .meta({ description: `int64: ${ID_RULE}; JSON numbers with no fractional part (7.0, 7e2) count as integers` });

/** Counts Unicode code points, as JSON Schema's maxLength does; JavaScript's length counts UTF-16 units. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

const text = (max: number) =>
  z
    .string({ error: required('must be a string') })
    .superRefine((value, ctx) => {
      if (!value.isWellFormed()) ctx.addIssue({ code: 'custom', message: 'must not contain unpaired surrogates (malformed UTF-16)' });
      else if (CONTROL.test(value)) ctx.addIssue({ code: 'custom', message: 'must not contain control characters (U+0000 to U+001F, U+007F)' });
      else if (!/\S/.test(value)) ctx.addIssue({ code: 'custom', message: 'must have at least one non-whitespace character' });
      // A string of at most max UTF-16 units has at most max code points: count only when it could be over.
      else if (value.length > max && codePointLength(value) > max) {
        ctx.addIssue({ code: 'custom', message: `must be at most ${max} characters (Unicode code points)` });
      }
    })
    .meta({ minLength: 1, maxLength: max, pattern: TEXT_PATTERN });

export const newPlantSchema = z
  .object({
    id: plantIdSchema,
    name: text(NAME_MAX).meta({ description: `1 to ${NAME_MAX} Unicode code points, at least one not white space, no control characters, no unpaired surrogates; stored exactly as sent` }),
    tag: text(TAG_MAX).optional().meta({ description: `optional; when present 1 to ${TAG_MAX} Unicode code points under the same rules as name` }),
  })
  .meta({ id: 'NewPlant', description: 'Unknown fields are ignored: neither stored nor echoed.' });

export const plantSchema = z
  .object({
    name: z.string(),
    tag: z.string().optional(),
  })
  .meta({ id: 'Plant' });

export const errorSchema = z
  .object({
    error: z.int32().meta({ description: 'Stable code, one per cause; see the table in the README.' }),
    message: z.string().meta({ description: 'What went wrong and what to fix, for a person.' }),
  })
  .meta({ id: 'Error' });

export type NewPlant = z.infer<typeof newPlantSchema>;
export type Plant = z.infer<typeof plantSchema>;
