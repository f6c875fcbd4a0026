/**
 * Idempotency-Key on the plant writes: the first request with a key is processed and its 2xx answer (status, ETag,
 * Location, body) stored under the caller and key (plant.idempotency-keys.ts); a later request with the same key
 * and the same method, path and body gets that answer again with `Idempotent-Replayed: true` and writes nothing.
 * The same key with another request is a 422, and while its first request is in flight in this process (at
 * WORKERS above 1: in any worker of the machine, through `machine`) a 409.
 * Across processes the store decides: it applies a keyed write only under a key it finds free in the write's own
 * transaction, and otherwise fails it with IdempotencyKeyTaken, answered by replayTakenKey.
 * A failed request (4xx, 5xx) stores nothing, so it may be retried with the same key.
 */
import type { TenantKey } from '../tenant';
import { hash } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AppError, catalogue } from '../errors';
import { sendJson } from '../http/output';
import { repeatWithoutOverlap } from '../lifecycle';
import type { Logger } from '../logger';
import type { MachineSlots } from '../resource';
import { localsOf } from '../request-locals';
import { IdempotencyKeyTaken, type IdempotencyKeys, type StoredAnswer } from './plant.idempotency-keys';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** 1 to 255 visible ASCII characters (no space, no control). */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** `machine`: at WORKERS above 1, a key in flight on any worker is the 409 (one round trip per keyed write). */
export type IdempotencyOptions = {
  keys: IdempotencyKeys;
  ttlMs: number;
  callerOf: (req: Request) => string;
  tenantOf: (req: Request) => TenantKey;
  logger: Logger;
  machine?: MachineSlots;
};

/**
 * One key of one caller in one tenant, as the process (and the machine) holds it in flight: the key first (visible
 * ASCII, never a newline), then the tenant's length, so no tenant and caller can run into another pair's.
 */
const slotOf = (tenant: TenantKey, caller: string, key: string): string => `${key}\n${tenant.length}\n${tenant}${caller}`;

const keyInUse = () =>
  new AppError('idempotency_key_in_use', `${IDEMPOTENCY_HEADER}: a request with this key is still in progress; retry after the number of seconds in Retry-After.`, { headers: { 'Retry-After': '1' } });

/** The key held for the machine too (the same slot: key, tenant and caller), or the 409 while another worker holds it. */
async function holdOnMachine(machine: MachineSlots, slot: string, local: () => boolean): Promise<() => boolean> {
  const give = await machine.hold('idempotency-key', slot);
  if (give === undefined) {
    local();
    throw keyInUse();
  }
  return () => {
    give();
    return local();
  };
}

function keyOf(req: Request): string | undefined {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return undefined;
  if (typeof header === 'string' && KEY.test(header)) return header;
  const message = 'must be 1 to 255 visible ASCII characters (a UUID is a good key), sent once';
  throw new AppError('invalid_idempotency_key', `${IDEMPOTENCY_HEADER}: ${message}`);
}

/**
 * What makes two requests the same: the SHA-256 of method, path with query, and the body's bytes. One-shot
 * `hash`: no Hash stream object per request; the bytes hashed are the same, so stored fingerprints still match.
 */
function fingerprintOf(req: Request, res: Response): string {
  const head = `${req.method} ${req.originalUrl}\n`;
  const raw = localsOf(res).rawBody;
  return hash('sha256', raw === undefined ? head : Buffer.concat([Buffer.from(head), raw]), 'hex');
}

function replay(res: Response, answer: StoredAnswer): void {
  res.status(answer.status);
  res.setHeader(REPLAYED_HEADER, 'true');
  res.setHeader('Cache-Control', 'no-store');
  if (answer.etag !== undefined) res.setHeader('ETag', answer.etag);
  if (answer.location !== undefined) res.setHeader('Location', answer.location);
  if (answer.body === undefined) res.end();
  else sendJson(res, answer.body);
}

/** A request whose key holds an answer: that answer again, or the 422 when the key came with another request. */
function answerStored(res: Response, stored: StoredAnswer, fingerprint: string): void {
  if (stored.fingerprint !== fingerprint) {
    throw new AppError('idempotency_key_reused', `${IDEMPOTENCY_HEADER}: this key was used for another request (method, path or body); use a new key for a new request.`);
  }
  replay(res, stored);
}

const textOf = (chunk: unknown): string | undefined =>
  typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;

const headerText = (res: Response, name: string): string | undefined => {
  const value = res.getHeader(name);
  return value === undefined ? undefined : String(value);
};

/**
 * A 2xx answer is normally stored by the write's store in the write's own transaction (`keyed.kept`); one that no
 * store write kept is stored here before it is sent, so a retry that arrives after the answer finds it. `release`
 * frees the key in this process, once, when the answer is sent or the connection closes.
 */
function storeOnEnd(res: Response, save: (answer: StoredAnswer) => Promise<void>, keyed: { fingerprint: string; kept?: boolean }, release: () => void): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.on('close', release);
  const keyedEnd = (...args: unknown[]) => {
    const { statusCode: status } = res;
    if (status < 200 || status > 299 || keyed.kept === true) {
      release();
      return end(...args);
    }
    const body = textOf(args[0]);
    const answer: StoredAnswer = { fingerprint: keyed.fingerprint, status, etag: headerText(res, 'etag'), location: headerText(res, 'location'), body: body === '' ? undefined : body };
    void save(answer).finally(() => {
      release();
      end(...args);
    });
    return res;
  };
  // Not `res.end = …`: that enumerable own property pushed each keyed request's objects into the old generation
  // (docs/performance/writes.md); defined as the prototype's `end` is (not enumerable), it does not.
  Object.defineProperty(res, 'end', { value: keyedEnd, writable: true, configurable: true, enumerable: false });
}

export function idempotent({ keys, ttlMs, callerOf, tenantOf, logger, machine }: IdempotencyOptions): RequestHandler {
  const inFlight = new Set<string>();
  return async (req, res, next) => {
    const key = keyOf(req);
    if (key === undefined) {
      next();
      return;
    }
    const caller = callerOf(req);
    const tenant = tenantOf(req);
    const slot = slotOf(tenant, caller, key);
    if (inFlight.has(slot)) throw keyInUse();
    inFlight.add(slot);
    let release = () => inFlight.delete(slot);
    if (machine !== undefined) release = await holdOnMachine(machine, slot, release);
    const fingerprint = fingerprintOf(req, res);
    // A store whose write reads the key itself answers a request sent again through replayTakenKey.
    if (!keys.checkedByWrite) {
      let stored: StoredAnswer | undefined;
      try {
        stored = await keys.find(tenant, caller, key, Date.now());
      } catch (err) {
        release();
        throw err;
      }
      if (stored !== undefined) {
        release();
        answerStored(res, stored, fingerprint);
        return;
      }
    }
    const save = (answer: StoredAnswer) =>
      keys.save(tenant, caller, key, answer, Date.now() + ttlMs).catch((err: unknown) => {
        logger.warn({ err }, 'the answer of a write with Idempotency-Key could not be stored; a retry with the key will be processed again');
      });
    const keyed = { tenant, caller, key, fingerprint, expiresAt: Date.now() + ttlMs };
    const locals = localsOf(res);
    locals.keyed = keyed;
    storeOnEnd(res, save, keyed, release);
    next();
  };
}

/** A keyed request that failed before its store read the key: a client's error (4xx), with a store that reads keys in its write. */
const failedUnread = (error: unknown, keys: IdempotencyKeys): boolean =>
  keys.checkedByWrite && error instanceof AppError && catalogue[error.reason].status < 500;

/**
 * After the controller: a store that met the key already holding an answer (a request sent again, or one another
 * process, a replica or another process on the SQLite file, committed meanwhile) applied nothing and failed with
 * IdempotencyKeyTaken. That answer is replayed (or the 422); should it not be readable, the 409 with Retry-After
 * stands. With a store that reads keys in its write, a keyed request that failed before reaching it (its body
 * broke a rule, say) is checked here, so a key already used is the 422 whichever the store.
 */
export function replayTakenKey(keys: IdempotencyKeys): ErrorRequestHandler {
  return async (error: unknown, _req, res, next) => {
    const { keyed } = localsOf(res);
    const taken = error instanceof IdempotencyKeyTaken;
    if (keyed === undefined || !(taken || failedUnread(error, keys))) {
      next(error);
      return;
    }
    const stored = (taken ? error.stored : undefined) ?? (await keys.find(keyed.tenant, keyed.caller, keyed.key, Date.now()));
    if (stored === undefined) {
      next(error);
      return;
    }
    // The answer on its way out is the other request's: nothing to store.
    keyed.kept = true;
    answerStored(res, stored, keyed.fingerprint);
  };
}

/** Deletes expired keys, a bounded batch every interval (at most a minute, at most the TTL), until stopped. */
export function pruneExpiredKeys(keys: IdempotencyKeys, ttlMs: number, logger: Logger): () => void {
  const prune = () =>
    keys.prune(Date.now(), 1000).catch((err: unknown) => logger.debug({ err }, 'pruning expired idempotency keys failed; retrying at the next interval'));
  return repeatWithoutOverlap(Math.min(ttlMs, 60_000), prune);
}
