// The loads of the writes section (bench/writes.section.ts, issue 34): a batch of BATCH creates, the same creates
// one per request, PUT replacing stored plants, creates with a fresh Idempotency-Key each, the replay of one key,
// and a read by id. Every load draws new ids (lib.ts newId) so no create is a retry.
import type autocannon from 'autocannon';
import { newId, TOKEN } from './lib';

export const BATCH = 1_000;
/** The store the PUT, replay and read loads run on: plants 1..WRITES_STORED. */
export const WRITES_STORED = 10_000;
const JSON_WRITE = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const AUTH = { authorization: `Bearer ${TOKEN}` };

const plantOf = (id: number): string => `{"id":${id},"name":"Monstera ${id}","tag":"bench"}`;

/** POST /plants/batch with BATCH creates of new ids. */
export const batchRequests = (): autocannon.Request[] => [
  {
    method: 'POST',
    path: '/plants/batch',
    headers: JSON_WRITE,
    setupRequest: (request) => {
      const operations = Array.from({ length: BATCH }, () => `{"op":"create","plant":${plantOf(newId())}}`);
      return { ...request, body: `{"operations":[${operations.join(',')}]}` };
    },
  },
];

let replaced = 0;
/** PUT /plants/{id} on stored plants 1..WRITES_STORED, a new name each time, so each replaces (200) and writes. */
export const putRequests = (): autocannon.Request[] => [
  {
    method: 'PUT',
    path: '/plants/1',
    headers: JSON_WRITE,
    setupRequest: (request) => {
      replaced += 1;
      const id = 1 + (replaced % WRITES_STORED);
      return { ...request, path: `/plants/${id}`, body: `{"name":"Replaced ${replaced}","tag":"bench"}` };
    },
  },
];

let keys = 0;
/**
 * POST /plants with new ids, one create in `every` with a new Idempotency-Key (the first request of its key, so
 * stored), the others without.
 */
export const keyedCreateRequests = (every = 1): autocannon.Request[] => [
  {
    method: 'POST',
    path: '/plants',
    headers: JSON_WRITE,
    setupRequest: (request) => {
      keys += 1;
      const id = newId();
      if (keys % every !== 0) return { ...request, body: plantOf(id) };
      return { ...request, headers: { ...JSON_WRITE, 'idempotency-key': `bench-${process.pid}-${keys}-${id}` }, body: plantOf(id) };
    },
  },
];

/** The same create with the same key every time: after the first, each is a replay of the stored answer. */
export function replayRequests(key: string, id: number): autocannon.Request[] {
  return [{ method: 'POST', path: '/plants', headers: { ...JSON_WRITE, 'idempotency-key': key }, body: plantOf(id) }];
}

/** Replays of `stored` keys taken in turn, each the create its first request made, with its key again. */
export function replaysInTurn(stored: readonly { key: string; id: number }[]): autocannon.Request[] {
  let sent = 0;
  return [
    {
      method: 'POST',
      path: '/plants',
      headers: JSON_WRITE,
      setupRequest: (request) => {
        const { key, id } = stored[sent % stored.length] as { key: string; id: number };
        sent += 1;
        return { ...request, headers: { ...JSON_WRITE, 'idempotency-key': key }, body: plantOf(id) };
      },
    },
  ];
}

/** The first request of a replay load, sent once: it stores the answer (a create: 200) the load then replays. */
export async function storeAnswer(port: number, key: string, id: number): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/plants`, { method: 'POST', headers: { ...JSON_WRITE, 'idempotency-key': key }, body: plantOf(id) });
  await response.text();
  if (response.status < 200 || response.status > 299) throw new Error(`the keyed create answered ${response.status}`);
}

/** GET /plants/{id} on stored plants. */
export const readRequests = (): autocannon.Request[] => [
  { method: 'GET', path: '/plants/1', headers: AUTH, setupRequest: (request) => ({ ...request, path: `/plants/${1 + Math.floor(Math.random() * WRITES_STORED)}` }) },
];
