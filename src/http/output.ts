/**
 * Writing an answer, for any resource: JSON text a resource prepared (bigint ids cannot go through
 * JSON.stringify), and the RFC 8288 next link under the prefix a trusted proxy mounts the service at.
 */
import type { Request, Response } from 'express';

// Written with Node's own calls: res.type and res.send look the media type up and parse it again to add the
// charset on every read, to arrive at these same headers. No validator is sent, so a request is never fresh (no
// 304), and Node leaves the body out of a HEAD answer itself.
export function sendJson(res: Response, json: string): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

/** JSON that no cache may keep: the resource changes. */
export function sendNoStoreJson(res: Response, json: string): void {
  res.setHeader('Cache-Control', 'no-store');
  sendJson(res, json);
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

/** A path of this service as a client reaches it (under a trusted proxy's prefix): a Location. */
export const pathOf = (req: Request, path: string): string => `${forwardedPrefix(req)}${path}`;

/**
 * RFC 8288 next link, path-absolute, so it resolves against whatever scheme and host the client used. The path
 * is the request's pathname (never the host of an absolute-form target such as GET http://evil.example/items),
 * under the prefix a trusted proxy mounts the service at; the query is `query` in its order, absent values left out.
 */
export function nextLink(req: Request, query: readonly (readonly [string, string | number | bigint | undefined])[]): string {
  const pairs = query.filter(([, value]) => value !== undefined).map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`);
  return `<${forwardedPrefix(req)}${req.path}?${pairs.join('&')}>; rel="next"`;
}
