// Ids unique per process and call, so tests sharing a database never touch each other's plants.
let next = Math.floor(Math.random() * 1e9) * 1000;

export function uniqueId(): number {
  next += 1;
  return next;
}

export function aNewPlant(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = uniqueId();
  return { id, name: `Monstera ${id}`, tag: 'indoor', ...overrides };
}

/** A time as the service writes one: RFC 3339 in UTC with milliseconds. */
export const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Any time the service may have stamped (the commit's, which a test cannot know to the millisecond). */
export const aTime = (): unknown => expect.stringMatching(TIME);

/** A stored plant's members as a body, with the two times it carries whatever they are. */
export const withTimes = <T extends Record<string, unknown>>(plant: T): T & { createdAt: unknown; updatedAt: unknown } => ({
  ...plant,
  createdAt: aTime(),
  updatedAt: aTime(),
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The exact text of a stored plant, given its text without the times (`{"id":7,"name":"Fern"}`): every byte as
 * written, then `"createdAt"` and `"updatedAt"` with any time before the closing brace.
 */
export function plantText(withoutTimes: string): unknown {
  return expect.stringMatching(new RegExp(`^${timedSource(withoutTimes)}$`));
}

/** The exact text of a list of stored plants, each given as plantText takes it. */
export function plantsText(withoutTimes: readonly string[]): unknown {
  return expect.stringMatching(new RegExp(`^\\[${withoutTimes.map(timedSource).join(',')}\\]$`));
}

function timedSource(withoutTimes: string): string {
  const time = TIME.source.slice(1, -1);
  return `${escapeRegExp(withoutTimes.slice(0, -1))},"createdAt":"${time}","updatedAt":"${time}"\\}`;
}
