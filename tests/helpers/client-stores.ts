import * as queryCore from '@tanstack/query-core';
import { sleep } from './common';
import { optionalService } from './optional-services';
import type { StoreKind } from './test-app';

/** The stores the client's suites run against: PostgreSQL too when one is named (required under CI). */
export const CLIENT_STORES: StoreKind[] = optionalService('postgres') === undefined ? ['sqlite'] : ['sqlite', 'postgres'];

// The client is an ES module package, so its types name query-core's import build; the test files are CommonJS,
// whose import of it would name the require build, whose QueryClient TypeScript holds apart (#private). One build, typed as the client sees it.
export type Core = typeof import('@tanstack/query-core', { with: { 'resolution-mode': 'import' } });
export type InfiniteData<T> = import('@tanstack/query-core', { with: { 'resolution-mode': 'import' } }).InfiniteData<T>;
export const core = queryCore as unknown as Core;

/** Polls `read` until `met` holds; throws with the last value (bigints spelled out) after timeoutMs. */
export async function until<T>(read: () => T, met: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const start = Date.now();
  while (!met(read())) {
    if (Date.now() - start > timeoutMs) throw new Error(`not met: ${JSON.stringify(read(), (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value))}`);
    await sleep(10);
  }
  return read();
}
