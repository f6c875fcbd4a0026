import type { StoredPlant } from './plant.repository';

/*
 * JSON text of plants with exact int64 ids. JSON.stringify throws on a bigint, and turning the id into a number
 * first would round it past 2^53 (9007199254740993 would become …992). The id is written as its decimal digits,
 * a JSON integer; strings still go through JSON.stringify, which escapes them as JSON requires.
 */

export function plantJson(plant: StoredPlant): string {
  const head = `{"id":${plant.id.toString()},"name":${JSON.stringify(plant.name)}`;
  return plant.tag === undefined ? `${head}}` : `${head},"tag":${JSON.stringify(plant.tag)}}`;
}

export function plantsJson(plants: readonly StoredPlant[]): string {
  let text = '[';
  for (let index = 0; index < plants.length; index += 1) {
    if (index > 0) text += ',';
    text += plantJson(plants[index] as StoredPlant);
  }
  return `${text}]`;
}
