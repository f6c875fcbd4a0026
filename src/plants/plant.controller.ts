import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors';
import { int64Param, invalid, rejectMalformedQuery, rejectMalformedSegment } from '../http/input';
import { nextLink, pathOf, sendJson, sendNoStoreJson } from '../http/output';
import { localsOf } from '../request-locals';
import type { PlantFeed, StreamLease } from './plant.feed';
import type { PlantService } from './plant.service';
import { newPlantJson, plantBodyJson, plantJson } from './plant.json';
import { feedQuerySchema, INT64_MAX, newPlantSchema, plantIdParamSchema, plantPatchSchema, putPlantSchema } from './plant.schemas';
import { cursorOf, parseListRequest } from './plant.list-query';
import { batchJson, parseBatch } from './plant.batch';
import { etagOf, expectedVersions, noneMatch, noneMatchAny, putExpected } from './plant.etags';
import { batchAnswer, createAnswer, deleteAnswer, putAnswer, updateAnswer } from './plant.answers';
import type { ChangeContext, KeepAnswer } from './plant.repository';
import type { TenantKey } from '../tenant';

// A feed position as sent in Last-Event-ID: plain decimal, 0 to 2^63 - 1.
const POSITION = /^(?:0|[1-9][0-9]{0,18})$/;
const positionOf = (text: string): bigint | undefined => (POSITION.test(text) && BigInt(text) <= INT64_MAX ? BigInt(text) : undefined);

const parseId = (text: string): bigint => int64Param('id', text, plantIdParamSchema);

export class PlantController {
  /**
   * `mayRead`: whether the caller's credentials grant plants:read; `leaseOf`: how long they hold, so a change
   * stream ends when they do (src/auth decides both; this layer cannot import it); `tenantOf`: the tenant the
   * request acts in, which every call below names; `charge`: the rate limit's count for a batch.
   */
  constructor(
    private readonly service: PlantService,
    private readonly feed: PlantFeed,
    private readonly mayRead: (req: Request) => boolean,
    private readonly leaseOf: (req: Request) => StreamLease | undefined,
    private readonly tenantOf: (req: Request) => TenantKey,
    private readonly charge: (req: Request, weight: number) => Promise<void> = () => Promise.resolve(),
  ) {}

  /**
   * GET /plants/events: the change feed as server-sent events. Last-Event-ID (what EventSource sends when it
   * reconnects) wins over ?after=; a malformed ?after= is a 400 like any parameter, a Last-Event-ID that is no
   * position a reset (docs/decisions/feed.md). Errors before the stream starts are ordinary JSON answers.
   */
  events = async (req: Request, res: Response): Promise<void> => {
    rejectMalformedQuery(req.originalUrl);
    const parsed = feedQuerySchema.safeParse(req.query);
    if (!parsed.success) throw invalid('invalid_parameter', parsed.error, req.query);
    const header = req.headers['last-event-id'];
    const fromHeader = typeof header === 'string' && header.trim() !== '' ? positionOf(header.trim()) : undefined;
    const malformed = typeof header === 'string' && header.trim() !== '' && fromHeader === undefined;
    const headers = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' };
    if (req.method === 'HEAD') {
      res.set(headers).status(200).end();
      return;
    }
    const { after, tag, q } = parsed.data;
    await this.feed.open({ tenant: this.tenantOf(req), after: fromHeader ?? after, tag, q, malformed, lease: this.leaseOf(req) }, () => {
      res.writeHead(200, headers);
      res.flushHeaders();
      return res;
    });
  };

  create = async (req: Request, res: Response): Promise<void> => {
    const parsed = newPlantSchema.safeParse(req.body);
    if (!parsed.success) throw invalid('invalid_field', parsed.error, req.body as Record<string, unknown>);
    const { plant, version } = await this.service.create(this.tenantOf(req), parsed.data, contextOf(res, createAnswer));
    // The Plant body: name and tag as stored, tag left out when absent, never the id. The headers res.json sets.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('ETag', etagOf(version));
    sendJson(res, plantBodyJson(plant));
  };

  /**
   * The answer carries Feed-Position always (the feed continues exactly after it), X-Total-Count only when
   * Prefer asks (RFC 7240: Preference-Applied says it was), and a next Link repeating the query with where the
   * next page starts: after=<id> for id sorts, an opaque cursor for the others.
   */
  list = async (req: Request, res: Response): Promise<void> => {
    // Express matches /plants/ to /plants; there it is GET /plants/{id} with an empty id.
    rejectEmptyId(req);
    rejectMalformedQuery(req.originalUrl);
    const request = parseListRequest(req.query, req.headers.prefer, this.tenantOf(req));
    const page = await this.service.list(request.tenant, request.read);
    res.setHeader('Vary', 'Prefer');
    res.setHeader('Feed-Position', String(page.position));
    if (page.total !== undefined) {
      res.setHeader('X-Total-Count', String(page.total));
      res.setHeader('Preference-Applied', 'count=exact');
    }
    const start = page.nextAfter !== undefined ? (['after', page.nextAfter] as const) : page.nextKeys !== undefined ? (['cursor', cursorOf(request, page.nextKeys)] as const) : undefined;
    if (start !== undefined) {
      const { limit, tag, q, sort } = request;
      res.setHeader('Link', nextLink(req, [['limit', limit], ['sort', sort === 'id' ? undefined : sort], ['q', q], start, ['tag', tag]]));
    }
    sendNoStoreJson(res, page.json);
  };

  get = async (req: Request, res: Response): Promise<void> => {
    const { json, version } = await this.service.get(this.tenantOf(req), parseId(req.params.id as string));
    const etag = etagOf(version);
    res.set('ETag', etag);
    // RFC 9110 13.1.2: a current tag in If-None-Match is a 304, headers and no body.
    if (noneMatch(req.headers['if-none-match'], etag)) res.set('Cache-Control', 'no-store').status(304).end();
    else sendNoStoreJson(res, json);
  };

  /**
   * JSON Merge Patch: the create's rules for each member sent; If-Match makes it conditional. A caller without
   * plants:read gets 204 with the ETag: the plant as stored holds what it did not send (docs/auth.md).
   */
  update = async (req: Request, res: Response): Promise<void> => {
    const id = parseId(req.params.id as string);
    const body = req.body as Record<string, unknown>;
    const parsed = plantPatchSchema.safeParse(body);
    if (!parsed.success) throw invalid('invalid_field', parsed.error, body);
    const { id: bodyId, ...patch } = parsed.data;
    rejectOtherId(id, bodyId);
    const mayRead = this.mayRead(req);
    const context = contextOf(res, (outcome, text) => updateAnswer(outcome, mayRead, text));
    const { plant, version } = await this.service.update(this.tenantOf(req), id, patch, expectedVersions(req.headers['if-match']), context);
    res.setHeader('ETag', etagOf(version));
    if (mayRead) sendNoStoreJson(res, plantJson(plant));
    else res.set('Cache-Control', 'no-store').status(204).end();
  };

  /**
   * Create or replace: 201 with Location when the id held no plant, 200 otherwise. The body is the plant as the
   * caller wrote it, `{id, name, tag?}` (nothing it did not send, so no read scope is needed), with its ETag.
   */
  put = async (req: Request, res: Response): Promise<void> => {
    const id = parseId(req.params.id as string);
    const createOnly = noneMatchAny(req.headers['if-none-match']);
    if (createOnly === false) {
      const message = 'must be * (create only) or left out on PUT; use If-Match to replace a known version';
      throw new AppError('invalid_parameter', `If-None-Match: ${message}`, { fields: [{ field: 'If-None-Match', code: 'unknown_value', message }] });
    }
    const body = req.body as Record<string, unknown>;
    const parsed = putPlantSchema.safeParse(body);
    if (!parsed.success) throw invalid('invalid_field', parsed.error, body);
    const { id: bodyId, ...plant } = parsed.data;
    rejectOtherId(id, bodyId);
    const expected = putExpected(req.headers['if-match'], createOnly === true);
    const location = pathOf(req, `/plants/${id}`);
    const { plant: stored, version, created } = await this.service.put(this.tenantOf(req), id, plant, expected, contextOf(res, (outcome, text) => putAnswer(outcome, location, text)));
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('ETag', etagOf(version));
    if (created) res.status(201).setHeader('Location', location);
    sendJson(res, newPlantJson(stored));
  };

  /**
   * All or nothing: 200 with each operation's result, or the first failure's error naming its operation. Needs
   * plants:write only; an update's result carries the plant only for a caller that may read (docs/decisions/api.md).
   */
  batch = async (req: Request, res: Response): Promise<void> => {
    const writes = parseBatch(req.body as Record<string, unknown>);
    // A batch counts as its number of operations against the rate limit (the limiter counted one).
    await this.charge(req, writes.length);
    const mayRead = this.mayRead(req);
    const outcomes = await this.service.batch(this.tenantOf(req), writes, contextOf(res, (outcome, text) => batchAnswer(writes, outcome, mayRead, text)));
    sendNoStoreJson(res, batchJson(writes, outcomes, mayRead));
  };

  delete = async (req: Request, res: Response): Promise<void> => {
    await this.service.delete(this.tenantOf(req), parseId(req.params.id as string), expectedVersions(req.headers['if-match']), contextOf(res, deleteAnswer));
    res.status(204).end();
  };

  /** A `%` in the id segment that is not UTF-8 percent-encoding (`%FF`, `%E0%A4%A`, `%`) is a 400 naming id. */
  rejectMalformedId: RequestHandler = (req, _res, next) => {
    rejectMalformedSegment('id', req.path.slice('/plants/'.length).replace(/\/$/, ''));
    next();
  };

  /** PUT, PATCH and DELETE /plants/ (an empty id) are a 400 naming id, before any body is read; /plants goes on to the 405. */
  withoutId: RequestHandler = (req, _res, next) => {
    rejectEmptyId(req);
    next();
  };
}

/**
 * A write's context: the caller's trace and, sent with Idempotency-Key, its key and how its answer is rendered,
 * which its store keeps in the write's own transaction (plant.answers.ts renders what this controller sends).
 */
function contextOf(res: Response, render: KeepAnswer['render']): ChangeContext | undefined {
  const { trace, keyed } = localsOf(res);
  if (keyed === undefined) return trace === undefined ? undefined : { trace };
  const keep: KeepAnswer = Object.assign(keyed, { render });
  return trace === undefined ? { keep } : { trace, keep };
}

/** A body's id, when sent, must be the path's: an id cannot be changed. */
function rejectOtherId(id: bigint, bodyId: bigint | undefined): void {
  if (bodyId === undefined || bodyId === id) return;
  const message = `must be the id in the path (${id}), or left out; an id cannot be changed`;
  throw new AppError('invalid_field', `id: ${message}`, { fields: [{ field: 'id', code: 'mismatch', message }] });
}

function rejectEmptyId(req: Request): void {
  if (req.path.endsWith('/')) {
    const message = "is empty; send /plants/{id} with the plant's id, or GET /plants to list.";
    throw new AppError('invalid_parameter', `id: ${message}`, { fields: [{ field: 'id', code: 'required', message }] });
  }
}
