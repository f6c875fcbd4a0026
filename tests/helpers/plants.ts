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
