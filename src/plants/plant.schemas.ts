import { z } from 'zod';
import type { FieldCode } from '../error.schemas';

export type { FieldCode } from '../error.schemas';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const NAME_MAX = 200;
export const TAG_MAX = 100;

const ID_RULE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
const CONTROL = /[\u0000-\u001F\u007F]/;
// The same rules as a JSON Schema pattern (ECMA-262 syntax): one non-whitespace character, no control character.
const TEXT_PATTERN = '^(?=[\\s\\S]*\\S)[^\\u0000-\\u001F\\u007F]*$';

const required = (rule: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : rule);

const rule = (message: string, code: FieldCode) => ({ message, params: { code } });

// The body parser hands integers over as number (safe) or bigint (beyond 2^53); fractions stay numbers.
export const plantIdSchema = z
  .union([z.number(), z.bigint()], { error: required(ID_RULE) })
  .refine((value) => typeof value === 'bigint' || Number.isInteger(value), rule(ID_RULE, 'type'))
  .transform((value) => BigInt(value))
  .refine((value) => value >= INT64_MIN && value <= INT64_MAX, rule(ID_RULE, 'out_of_range'))
  .meta({ description: `int64: ${ID_RULE}; JSON numbers with no fractional part (7.0, 7e2) count as integers` });

/** Counts Unicode code points, as JSON Schema's maxLength does; JavaScript's length counts UTF-16 units. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

const text = (max: number, typeError: (issue: { input?: unknown }) => string = required('must be a string')) =>
  z
    .string({ error: typeError })
    .superRefine((value, ctx) => {
      const problem = (message: string, code: FieldCode) => ctx.addIssue({ code: 'custom', ...rule(message, code) });
      if (!value.isWellFormed()) problem('must not contain unpaired surrogates (malformed UTF-16)', 'invalid_characters');
      else if (CONTROL.test(value)) problem('must not contain control characters (U+0000 to U+001F, U+007F)', 'invalid_characters');
      else if (!/\S/.test(value)) problem('must have at least one non-whitespace character', value === '' ? 'too_short' : 'blank');
      // A string of at most max UTF-16 units has at most max code points: count only when it could be over.
      else if (value.length > max && codePointLength(value) > max) {
        problem(`must be at most ${max} characters (Unicode code points)`, 'too_long');
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

/** PUT /plants/{id}: a whole plant, the create's rules; `id`, when sent, must be the path's id. */
export const putPlantSchema = newPlantSchema
  .extend({ id: plantIdSchema.optional().meta({ description: "optional; when present it must be the path's id" }) })
  .meta({ id: 'PutPlant', description: 'The plant under the path\'s id: a member left out (tag) is removed. Unknown fields are ignored.' });

/**
 * PATCH /plants/{id}: a JSON Merge Patch (RFC 7396) of a plant. Members follow the create's rules; `tag: null`
 * removes the tag; `id`, when sent, must be the path's id; unknown members are ignored as in a create.
 */
export const plantPatchSchema = z
  .object({
    id: plantIdSchema.optional().meta({ description: "optional; when present it must be the path's id" }),
    name: text(NAME_MAX).optional().meta({ description: `when present, the new name: the rules of NewPlant.name` }),
    tag: text(TAG_MAX, required('must be a string, or null to remove the tag'))
      .nullable()
      .optional()
      .meta({ description: 'when present, the new tag under the rules of NewPlant.tag; null removes the tag' }),
  })
  .meta({ id: 'PlantPatch', description: 'A JSON Merge Patch (RFC 7396): members left out keep their value. Unknown members are ignored.' });

// Path and query parameters arrive as strings, or as an array when a query parameter is repeated.
const once = (rule: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : Array.isArray(issue.input) ? 'must be given once' : rule;

// Plain decimal only: no sign +, no leading zeros, no exponent, so each id has exactly one spelling. The range
// is a separate check, so that too many digits is out_of_range rather than a wrong type.
const DECIMAL = /^(?:0|-?[1-9][0-9]*)$/;
const ID_TEXT_RULE = `must be an integer from ${INT64_MIN} to ${INT64_MAX} in plain decimal (no +, no leading zeros)`;

const int64Text = (description: string) =>
  z
    .string({ error: once(ID_TEXT_RULE) })
    .refine((value) => DECIMAL.test(value), rule(ID_TEXT_RULE, 'type'))
    .transform((value) => BigInt(value))
    .refine((value) => value >= INT64_MIN && value <= INT64_MAX, rule(ID_TEXT_RULE, 'out_of_range'))
    .meta({ type: 'integer', format: 'int64', description });

/** The {id} of /plants/{id}. */
export const plantIdParamSchema = int64Text(`The plant's id: ${ID_TEXT_RULE}.`);

export const LIMIT_DEFAULT = 100;
export const LIMIT_MAX = 1000;
const LIMIT_RULE = `must be an integer from 1 to ${LIMIT_MAX}`;

export const listQuerySchema = z.object({
  limit: z
    .string({ error: once(LIMIT_RULE) })
    .refine((value) => DECIMAL.test(value), rule(LIMIT_RULE, 'type'))
    .transform(Number)
    .refine((value) => value >= 1 && value <= LIMIT_MAX, rule(LIMIT_RULE, 'out_of_range'))
    .default(LIMIT_DEFAULT)
    .meta({ type: 'integer', minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: `The most plants to return: ${LIMIT_RULE}, default ${LIMIT_DEFAULT}.` }),
  after: int64Text('Only with sort=id (ids greater) or sort=-id (ids smaller): the last id of the previous page (see the Link header).').optional(),
  tag: text(TAG_MAX, once('must be a string'))
    .optional()
    .meta({ description: `Only plants with exactly this tag: 1 to ${TAG_MAX} Unicode code points under the rules of tag.` }),
});

export const SEARCH_MAX = 100;

/**
 * The key a search compares: the text in Unicode NFKC, lower-cased by the default mapping (as toLowerCase does), so
 * "ﬁcus", "FICUS" and "Ficus" share one. Computed here, never by a database: both stores then match and sort alike.
 */
export const searchKey = (text: string): string => text.normalize('NFKC').toLowerCase();

/** `q` on GET /plants and GET /plants/events: a plain substring of the name, compared by searchKey. */
export const searchTextSchema = text(SEARCH_MAX, once('must be a string')).meta({
  description: `Only plants whose name contains this text, compared without case (both in Unicode NFKC, lower-cased); % _ * \\ are literal. 1 to ${SEARCH_MAX} Unicode code points, at least one not white space.`,
  example: 'fern',
});

/** The orders of GET /plants: a member, `-` for descending. */
export const SORTS = ['id', '-id', 'name', '-name', 'createdAt', '-createdAt', 'updatedAt', '-updatedAt'] as const;
export type Sort = (typeof SORTS)[number];

/**
 * GET /plants beyond limit, after and tag: each a string given once here; which sort and cursor values are
 * known, and which go together, is decided after (plant.list-query.ts), each with a code of its own.
 */
export const listQueryExtraSchema = z.object({
  q: searchTextSchema.optional().meta({
    description: `Only plants whose name contains this text, compared without case: both in Unicode NFKC and lower-cased (as JavaScript's toLowerCase does), a plain substring (% _ * \\ are literal). Combines with tag. 1 to ${SEARCH_MAX} Unicode code points, at least one not white space.`,
    example: 'fern',
  }),
  sort: z
    .string({ error: once('must be a string') })
    .optional()
    .meta({
      enum: [...SORTS],
      default: 'id',
      example: '-createdAt',
      description:
        'The order: id (default), name (the name in NFKC, lower-cased, by code point; ties by the exact name by code point, then id), createdAt or updatedAt (ties by id); `-` before it for descending. No collation of the database decides it.',
    }),
  cursor: z
    .string({ error: once('must be a string') })
    .optional()
    .meta({
      // No example: a try-it form would send it with whatever sort and q it holds, a 400.
      description: 'Where the page starts, for sort other than id and -id: an opaque value from the Link of the previous page. Follow the Link; never build or change one.',
    }),
});

const POSITION_RULE = `must be a feed position: an integer from 0 to ${INT64_MAX} in plain decimal`;

export const feedQuerySchema = z.object({
  after: z
    .string({ error: once(POSITION_RULE) })
    .refine((value) => DECIMAL.test(value) && !value.startsWith('-'), rule(POSITION_RULE, 'type'))
    .transform((value) => BigInt(value))
    .refine((value) => value <= INT64_MAX, rule(POSITION_RULE, 'out_of_range'))
    .optional()
    .meta({
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'Only changes after this position (the `id:` of the last event received), for clients that cannot send Last-Event-ID; Last-Event-ID wins when both are sent.',
    }),
  tag: text(TAG_MAX, once('must be a string'))
    .optional()
    .meta({
      description: `Only changes of plants that had this tag before the change or have it after: an edit that takes a plant out of the tag comes, with its new tag. 1 to ${TAG_MAX} Unicode code points under the rules of tag.`,
    }),
  q: searchTextSchema.optional().meta({
    description: `Only changes of plants whose name contained this text before the change or contains it after (with tag: both held before, or both hold after), compared as GET /plants compares q: without case, both in Unicode NFKC and lower-cased, a plain substring. A plant renamed out of the search comes once as plant.updated with its new name: drop it. 1 to ${SEARCH_MAX} Unicode code points, at least one not white space.`,
    example: 'fern',
  }),
});

export const plantSchema = z
  .object({
    name: z.string(),
    tag: z.string().optional(),
  })
  .meta({ id: 'Plant' });

/** A time as every answer writes it: RFC 3339 in UTC with milliseconds, as Date.prototype.toISOString writes it. */
export const timeSchema = (description: string) =>
  z.string().meta({ format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$', example: '2026-11-27T09:41:07.250Z', description });

export const storedPlantSchema = z
  .object({
    // Written by plant.json.ts, never by JSON.stringify: a JSON integer of up to 19 digits, exact.
    id: z.number().meta({ type: 'integer', format: 'int64', description: `int64, exact: from ${INT64_MIN} to ${INT64_MAX}, written as a JSON integer digit for digit` }),
    name: z.string(),
    tag: z.string().optional(),
    createdAt: timeSchema('When the plant was created: the time of the commit that stored it (UTC, milliseconds).'),
    updatedAt: timeSchema('When the plant last changed: the time of the commit of its last create or edit (UTC, milliseconds).'),
  })
  .meta({ id: 'StoredPlant', description: 'A plant with its id and times, as GET /plants and GET /plants/{id} answer it.' });

export type NewPlant = z.infer<typeof newPlantSchema>;
export type PlantPatchBody = z.infer<typeof plantPatchSchema>;
export type ListQuery = z.infer<typeof listQuerySchema>;
export type ListQueryExtra = z.infer<typeof listQueryExtraSchema>;
export type Plant = z.infer<typeof plantSchema>;
