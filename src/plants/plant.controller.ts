import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { AppError, type FieldProblem, type Reason } from '../errors';
import { localsOf } from '../request-locals';
import type { PlantFeed, StreamLease } from './plant.feed';
import type { PlantService } from './plant.service';
import { plantBodyJson, plantJson } from './plant.json';
import { feedQuerySchema, INT64_MAX, listQuerySchema, newPlantSchema, plantIdParamSchema, plantPatchSchema, type FieldCode, type ListQuery } from './plant.schemas';
import { etagOf, expectedVersions, noneMatch } from './preconditions';

/**
 * A failed parse as the 400 a form can use: the message names every problem, `fields` lists them one by one.
 * The rules in plant.schemas.ts name their own code; what zod finds itself is a missing value, a repeated
 * query parameter or a wrong type, told apart by the value that was sent.
 */
function invalid(reason: Reason, error: z.ZodError, input: Record<string, unknown>): AppError {
  const fields: FieldProblem[] = error.issues.map((issue) => {
    const value = input[String(issue.path[0])];
    const own = issue.code === 'custom' ? (issue.params as { code?: FieldCode } | undefined)?.code : undefined;
    const code: FieldCode = own ?? (value === undefined ? 'required' : Array.isArray(value) ? 'repeated' : 'type');
    return { field: issue.path.join('.'), code, message: issue.message };
  });
  return new AppError(reason, fields.map(({ field, message }) => `${field}: ${message}`).join('; '), { fields });
}

// At most 18 digits: always inside int64, so BigInt alone parses it. The usual id takes this path; the schema
// (one zod parse and its allocations per request) only sees the rest, to accept or to name what is wrong.
const SURELY_INT64 = /^(?:0|-?[1-9][0-9]{0,17})$/;

function parseId(text: string): bigint {
  if (SURELY_INT64.test(text)) return BigInt(text);
  const parsed = plantIdParamSchema.safeParse(text);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const code = (issue?.code === 'custom' ? (issue.params as { code?: FieldCode } | undefined)?.code : undefined) ?? 'type';
    const message = issue?.message ?? 'is not valid';
    throw new AppError('invalid_parameter', `id: ${message}`, { fields: [{ field: 'id', code, message }] });
  }
  return parsed.data;
}

// Ids are bigints, which JSON.stringify cannot write: the store hands back the body's JSON text. Written with
// Node's own calls: res.type and res.send look the media type up and parse it again to add the charset on every
// read, to arrive at these same headers. No validator is sent, so a request is never fresh (no 304), and Node
// leaves the body out of a HEAD answer itself.
function sendPlants(res: Response, json: string): void {
  res.setHeader('Cache-Control', 'no-store');
  sendJson(res, json);
}

function sendJson(res: Response, json: string): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

// A path of plain segments (RFC 3986 pchar, no comma, no dot segment): never a host (//host) or a full URL.
const PLAIN_PREFIX = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+;=:@]|%[0-9A-Fa-f]{2})+)*\/?$/;
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;

/**
 * The path a proxy mounts the service under (X-Forwarded-Prefix), only from a hop TRUST_PROXY trusts: any
 * client could send the header. Express compiles TRUST_PROXY into 'trust proxy fn', as req.ip and req.protocol use it.
 */
function forwardedPrefix(req: Request): string {
  const value = req.headers['x-forwarded-prefix'];
  if (typeof value !== 'string' || !PLAIN_PREFIX.test(value) || DOT_SEGMENT.test(value)) return '';
  const trust = req.app.get('trust proxy fn') as (address: string | undefined, hop: number) => boolean;
  if (!trust(req.socket.remoteAddress, 0)) return '';
  return value.endsWith('/') ? value.slice(0, -1) : value;
}

/**
 * RFC 8288 next link, path-absolute, so it resolves against whatever scheme and host the client used. The path
 * is the request's pathname (never the host of an absolute-form target such as GET http://evil.example/plants),
 * under the prefix a trusted proxy mounts the service at.
 */
function nextLink(req: Request, query: Pick<ListQuery, 'limit' | 'tag'>, after: bigint): string {
  const tag = query.tag === undefined ? '' : `&tag=${encodeURIComponent(query.tag)}`;
  return `<${forwardedPrefix(req)}${req.path}?limit=${query.limit}&after=${after}${tag}>; rel="next"`;
}

// A feed position as sent in Last-Event-ID: plain decimal, 0 to 2^63 - 1.
const POSITION = /^(?:0|[1-9][0-9]{0,18})$/;
const positionOf = (text: string): bigint | undefined => (POSITION.test(text) && BigInt(text) <= INT64_MAX ? BigInt(text) : undefined);

export class PlantController {
  /**
   * `mayRead`: whether the caller's credentials grant plants:read; `leaseOf`: how long they hold, so a change
   * stream ends when they do (src/auth decides both; this layer cannot import it).
   */
  constructor(
    private readonly service: PlantService,
    private readonly feed: PlantFeed,
    private readonly mayRead: (req: Request) => boolean,
    private readonly leaseOf: (req: Request) => StreamLease | undefined,
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
    await this.feed.open({ after: fromHeader ?? parsed.data.after, tag: parsed.data.tag, malformed, lease: this.leaseOf(req) }, () => {
      res.writeHead(200, headers);
      res.flushHeaders();
      return res;
    });
  };

  create = async (req: Request, res: Response): Promise<void> => {
    const parsed = newPlantSchema.safeParse(req.body);
    if (!parsed.success) throw invalid('invalid_field', parsed.error, req.body as Record<string, unknown>);
    const { trace } = localsOf(res);
    const { plant, version } = await this.service.create(parsed.data, trace === undefined ? undefined : { trace });
    // The Plant body: name and tag as stored, tag left out when absent, never the id. The headers res.json sets.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('ETag', etagOf(version));
    sendJson(res, plantBodyJson(plant));
  };

  list = async (req: Request, res: Response): Promise<void> => {
    // Express matches /plants/ to /plants; there it is GET /plants/{id} with an empty id.
    rejectEmptyId(req);
    rejectMalformedQuery(req.originalUrl);
    const parsed = listQuerySchema.safeParse(req.query);
    if (!parsed.success) throw invalid('invalid_parameter', parsed.error, req.query);
    const page = await this.service.list(parsed.data);
    if (page.nextAfter !== undefined) res.set('Link', nextLink(req, parsed.data, page.nextAfter));
    sendPlants(res, page.json);
  };

  get = async (req: Request, res: Response): Promise<void> => {
    const { json, version } = await this.service.get(parseId(req.params.id as string));
    const etag = etagOf(version);
    res.set('ETag', etag);
    // RFC 9110 13.1.2: a current tag in If-None-Match is a 304, headers and no body.
    if (noneMatch(req.headers['if-none-match'], etag)) res.set('Cache-Control', 'no-store').status(304).end();
    else sendPlants(res, json);
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
    if (bodyId !== undefined && bodyId !== id) {
      const message = `must be the id in the path (${id}), or left out; an id cannot be changed`;
      throw new AppError('invalid_field', `id: ${message}`, { fields: [{ field: 'id', code: 'mismatch', message }] });
    }
    const { trace } = localsOf(res);
    const { plant, version } = await this.service.update(id, patch, expectedVersions(req.headers['if-match']), trace === undefined ? undefined : { trace });
    res.setHeader('ETag', etagOf(version));
    if (this.mayRead(req)) sendPlants(res, plantJson(plant));
    else res.set('Cache-Control', 'no-store').status(204).end();
  };

  delete = async (req: Request, res: Response): Promise<void> => {
    const { trace } = localsOf(res);
    await this.service.delete(parseId(req.params.id as string), expectedVersions(req.headers['if-match']), trace === undefined ? undefined : { trace });
    res.status(204).end();
  };

  /** A `%` in the id segment that is not UTF-8 percent-encoding (`%FF`, `%E0%A4%A`, `%`) is a 400 naming id. */
  rejectMalformedId: RequestHandler = (req, _res, next) => {
    const segment = req.path.slice('/plants/'.length).replace(/\/$/, '');
    if (!decodes(segment)) throw new AppError('invalid_parameter', `id: ${MALFORMED_ENCODING}`);
    next();
  };

  /** PATCH and DELETE /plants/ (an empty id) are a 400 naming id, before any body is read; /plants goes on to the 405. */
  withoutId: RequestHandler = (req, _res, next) => {
    rejectEmptyId(req);
    next();
  };
}

const MALFORMED_ENCODING = 'has malformed percent-encoding; each % must start a UTF-8 byte written as two hex digits (%20, %C3%A9).';

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Express's query parser (node:querystring) turns bytes that are not UTF-8 into U+FFFD without a word, so
 * `?tag=%FF` would search for a tag nobody wrote. The raw query is checked first: a 400 naming the parameter.
 */
function rejectMalformedQuery(url: string): void {
  const start = url.indexOf('?');
  if (start === -1 || !url.includes('%', start)) return;
  for (const pair of url.slice(start + 1).split('&')) {
    if (decodes(pair)) continue;
    const [name = ''] = pair.split('=', 1);
    const label = decodes(name) && name !== '' ? decodeURIComponent(name) : 'a query parameter name';
    throw new AppError('invalid_parameter', `${label}: ${MALFORMED_ENCODING}`);
  }
}

function rejectEmptyId(req: Request): void {
  if (req.path.endsWith('/')) {
    const message = "is empty; send /plants/{id} with the plant's id, or GET /plants to list.";
    throw new AppError('invalid_parameter', `id: ${message}`, { fields: [{ field: 'id', code: 'required', message }] });
  }
}
